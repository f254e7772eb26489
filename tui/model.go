package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// Config configures the full-screen client.
type Config struct {
	Client         *client.Client
	ConversationID string // open this conversation and show its history
	Server         string // shown in the header
}

// Run runs the full-screen client until the user quits or ctx ends. It
// returns an error when the server cannot be reached or refuses the
// client at the start; errors later on are shown on the screen.
func Run(ctx context.Context, cfg Config) error {
	info, err := cfg.Client.Info(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", cfg.Server, err)
	}
	m := newModel(ctx, cfg, info)
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err = p.Run()
	m.stopStream()
	waitTimeout(&m.requests, 3*time.Second) // a cancel in flight is let finish
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// ModelName is how the client names the server's model: its name, and
// that it is the offline demo model when it is.
func ModelName(info client.Info) string {
	name := SanitizeLine(info.Model)
	if info.Demo {
		name += " (offline demo model)"
	}
	return name
}

// entry is one turn of the transcript: the user's message and the answer.
type entry struct {
	user string
	acc  *client.Accumulator
	// the live turn's state
	turnID       string
	running      bool
	cancelling   bool
	reconnecting *client.ConnState
	err          error
	// rendered caches the finished turn's lines per view (collapsed,
	// expanded) at the renderer's width.
	rendered [2]string
}

// The messages of the client's commands.
type (
	historyMsg struct {
		convID  string
		entries []*entry
		err     error
	}
	convsMsg struct {
		list []toolmark.Conversation
		err  error
	}
	startedMsg struct {
		gen    int
		convID string
		turnID string
		err    error
	}
	eventMsg struct {
		gen int
		ev  client.Event
	}
	connMsg struct {
		gen int
		st  client.ConnState
	}
	streamEndMsg struct {
		gen int
		err error
	}
	cancelDoneMsg struct{ err error }
)

// mode is what the screen shows.
type mode int

const (
	modeChat   mode = iota
	modePicker      // the list of conversations
)

// model is the full-screen client: the Bubble Tea model.
type model struct {
	ctx   context.Context
	cfg   Config
	c     *client.Client
	info  client.Info
	width int
	h     int

	vp    viewport.Model
	input textinput.Model
	spin  spinner.Model
	r     *renderer

	convID   string
	history  []*entry
	live     *entry
	gen      int // identifies the live turn's stream
	events   chan tea.Msg
	stop     context.CancelFunc
	expanded bool
	notice   string
	mode     mode
	convs    []toolmark.Conversation
	cursor   int
	requests sync.WaitGroup // cancel requests in flight
	mu       sync.Mutex     // guards stop
}

func newModel(ctx context.Context, cfg Config, info client.Info) *model {
	in := textinput.New()
	in.Prompt = "› "
	in.Placeholder = "Ask something — Enter sends, /list, /new, /quit"
	in.Focus()
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(styleSpinner))
	m := &model{ctx: ctx, cfg: cfg, c: cfg.Client, info: info, convID: cfg.ConversationID,
		vp: viewport.New(), input: in, spin: sp, r: newRenderer(80), width: 80, h: 24}
	m.vp.SoftWrap = true
	return m
}

// Init implements tea.Model.
func (m *model) Init() tea.Cmd {
	if m.convID != "" {
		return m.loadHistory(m.convID)
	}
	return nil
}

// loadHistory fetches a conversation's messages.
func (m *model) loadHistory(id string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		conv, err := c.GetConversation(ctx, id)
		if err != nil {
			return historyMsg{convID: id, err: err}
		}
		var entries []*entry
		var user string
		for _, msg := range conv.Messages {
			if msg.Role == toolmark.RoleUser {
				user = msg.Content
				continue
			}
			acc, err := client.AccumulatorOf(msg)
			if err != nil {
				continue
			}
			entries = append(entries, &entry{user: user, acc: acc, turnID: msg.TurnID})
			user = ""
		}
		return historyMsg{convID: id, entries: entries}
	}
}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.h = msg.Width, msg.Height
		m.r = newRenderer(m.width)
		for _, e := range m.history {
			e.rendered = [2]string{}
		}
		m.vp.SetWidth(m.width)
		m.vp.SetHeight(max(m.h-3, 1))
		m.input.SetWidth(max(m.width-4, 10))
		m.refresh(true)
		return m, nil

	case tea.KeyPressMsg:
		return m.key(msg)

	case spinner.TickMsg:
		if m.live == nil || !m.live.running {
			return m, nil // the spinner stops with the turn
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		m.refresh(false)
		return m, cmd

	case historyMsg:
		if msg.err != nil {
			m.notice = "Could not open the conversation: " + errText(msg.err)
			return m, nil
		}
		m.convID, m.history, m.live, m.mode = msg.convID, msg.entries, nil, modeChat
		m.notice = ""
		if len(m.history) > 0 {
			if last := m.history[len(m.history)-1]; !last.acc.Status().Final() && last.turnID != "" {
				// An answer is still being written: follow it.
				m.history = m.history[:len(m.history)-1]
				m.live = last
				last.running = true
				return m, tea.Batch(m.startStream(last.turnID, last.acc.Seq()), m.spin.Tick)
			}
		}
		m.refresh(true)
		return m, nil

	case convsMsg:
		if msg.err != nil {
			m.notice = "Could not list the conversations: " + errText(msg.err)
			return m, nil
		}
		m.convs, m.cursor, m.mode = msg.list, 0, modePicker
		m.refresh(true)
		return m, nil

	case startedMsg:
		if msg.gen != m.gen || m.live == nil {
			return m, nil
		}
		if msg.convID != "" {
			m.convID = msg.convID
		}
		if msg.err != nil {
			m.live.running = false
			m.live.err = msg.err
			m.finishLive()
			return m, nil
		}
		m.live.turnID = msg.turnID
		return m, m.startStream(msg.turnID, 0)

	case eventMsg:
		if msg.gen != m.gen || m.live == nil {
			return m, nil
		}
		m.live.reconnecting = nil
		if err := m.live.acc.Add(msg.ev); err != nil {
			m.live.err = err
		}
		m.refresh(false)
		return m, m.next()

	case connMsg:
		if msg.gen != m.gen || m.live == nil {
			return m, nil
		}
		if msg.st.Connected {
			m.live.reconnecting = nil
		} else {
			st := msg.st
			m.live.reconnecting = &st
		}
		m.refresh(false)
		return m, m.next()

	case streamEndMsg:
		if msg.gen != m.gen || m.live == nil {
			return m, nil
		}
		if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
			m.live.err = msg.err
		}
		m.live.running = false
		m.finishLive()
		return m, nil

	case cancelDoneMsg:
		if msg.err != nil {
			m.notice = "Could not cancel: " + errText(msg.err)
		}
		return m, nil
	}
	return m, nil
}

// key handles a key press.
func (m *model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "ctrl+c":
		if m.live != nil && m.live.running {
			if m.live.cancelling {
				return m, tea.Quit
			}
			m.live.cancelling = true
			m.refresh(false)
			return m, m.cancel(m.live.turnID)
		}
		return m, tea.Quit
	case "ctrl+o":
		if m.mode == modeChat {
			m.expanded = !m.expanded
			m.refresh(true) // the expanded view is taken once, here, and left alone
		}
		return m, nil
	case "pgup":
		m.vp.PageUp()
		return m, nil
	case "pgdown":
		m.vp.PageDown()
		return m, nil
	}
	if m.mode == modePicker {
		switch k.String() {
		case "up":
			m.cursor = max(m.cursor-1, 0)
		case "down":
			m.cursor = min(m.cursor+1, max(len(m.convs)-1, 0))
		case "esc":
			m.mode = modeChat
		case "enter":
			if len(m.convs) > 0 && (m.live == nil || !m.live.running) {
				return m, m.loadHistory(m.convs[m.cursor].ID)
			}
			m.mode = modeChat
		}
		m.refresh(true)
		return m, nil
	}
	switch k.String() {
	case "up":
		m.vp.ScrollUp(1)
		return m, nil
	case "down":
		m.vp.ScrollDown(1)
		return m, nil
	case "enter":
		return m, m.submit()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return m, cmd
}

// submit acts on the input line: a command or a message.
func (m *model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	busy := m.live != nil && m.live.running
	cmd, arg, _ := strings.Cut(text, " ")
	switch cmd {
	case "/quit", "/exit":
		return tea.Quit
	case "/new":
		if busy {
			m.notice = "An answer is being written: wait for it, or Ctrl-C to cancel it."
			return nil
		}
		m.input.Reset()
		m.convID, m.history, m.live, m.expanded = "", nil, nil, false
		m.notice = "A new conversation starts with your next message."
		m.refresh(true)
		return nil
	case "/list":
		m.input.Reset()
		c, ctx := m.c, m.ctx
		return func() tea.Msg {
			l, err := c.ListConversations(ctx)
			return convsMsg{list: l, err: err}
		}
	case "/open":
		if busy {
			m.notice = "An answer is being written: wait for it, or Ctrl-C to cancel it."
			return nil
		}
		m.input.Reset()
		return m.loadHistory(strings.TrimSpace(arg))
	}
	if busy {
		m.notice = "An answer is being written: wait for it, or Ctrl-C to cancel it."
		return nil
	}
	m.input.Reset()
	m.notice = ""
	m.expanded = false
	if m.live != nil {
		m.history = append(m.history, m.live)
	}
	m.live = &entry{user: text, acc: client.NewAccumulator(nil), running: true}
	m.gen++
	gen, c, ctx, convID := m.gen, m.c, m.ctx, m.convID
	m.refresh(true)
	return tea.Batch(m.spin.Tick, func() tea.Msg {
		conv, ti, err := startTurn(ctx, c, convID, text)
		return startedMsg{gen: gen, convID: conv, turnID: ti.Turn.ID, err: err}
	})
}

// startStream follows a turn from after seq: events arrive as messages
// through a channel that next reads.
func (m *model) startStream(turnID string, after int64) tea.Cmd {
	m.stopStream()
	ctx, stop := context.WithCancel(m.ctx)
	m.mu.Lock()
	m.stop = stop
	m.mu.Unlock()
	gen, c := m.gen, m.c
	ch := make(chan tea.Msg, 256)
	m.events = ch
	go func() {
		defer close(ch)
		onConn := client.OnConnState(func(st client.ConnState) { ch <- connMsg{gen: gen, st: st} })
		for ev, err := range c.Events(ctx, turnID, after, onConn) {
			if err != nil {
				ch <- streamEndMsg{gen: gen, err: err}
				return
			}
			ch <- eventMsg{gen: gen, ev: ev}
		}
		ch <- streamEndMsg{gen: gen}
	}()
	return m.next()
}

// next waits for the stream's next message.
func (m *model) next() tea.Cmd {
	ch := m.events
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

func (m *model) stopStream() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
}

// cancel asks the server to cancel a turn. The request outlives the
// program: Run waits for it.
func (m *model) cancel(turnID string) tea.Cmd {
	if turnID == "" {
		return nil
	}
	m.requests.Add(1)
	c, ctx := m.c, m.ctx
	done := make(chan error, 1)
	go func() {
		defer m.requests.Done()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, err := c.CancelTurn(cctx, turnID)
		done <- err
	}()
	return func() tea.Msg { return cancelDoneMsg{err: <-done} }
}

// finishLive ends the live turn's display.
func (m *model) finishLive() {
	m.live.cancelling, m.live.reconnecting = false, nil
	m.refresh(false)
}

// refresh renders the transcript into the viewport, unless the expanded
// view is shown: that one is a snapshot, taken when force is set (on
// switching to it) and not touched by the turn's updates.
func (m *model) refresh(force bool) {
	if m.expanded && !force {
		return
	}
	atBottom := m.vp.AtBottom() || force
	switch m.mode {
	case modePicker:
		m.vp.SetContent(m.pickerView())
		return
	default:
		m.vp.SetContent(m.transcript())
	}
	if atBottom {
		m.vp.GotoBottom()
	}
}

// transcript renders the conversation: the history and the live turn.
func (m *model) transcript() string {
	view := 0
	if m.expanded {
		view = 1
	}
	var parts []string
	for _, e := range m.history {
		if e.rendered[view] == "" {
			e.rendered[view] = m.entryView(e)
		}
		parts = append(parts, e.rendered[view])
	}
	if m.live != nil {
		parts = append(parts, m.entryView(m.live))
	}
	if len(parts) == 0 {
		return styleMuted.Render("No messages yet.")
	}
	return strings.Join(parts, "\n\n")
}

// entryView renders one turn: the user's message, the answer and, while
// it runs, the status line.
func (m *model) entryView(e *entry) string {
	var b strings.Builder
	if e.user != "" {
		b.WriteString(styleUser.Render("› ") + ansi.Wrap(Sanitize(e.user), max(m.width-2, 10), "") + "\n")
	}
	if ans := m.r.turn(turnView{acc: e.acc, expanded: m.expanded, frame: m.spin.View()}); ans != "" {
		b.WriteString(ans + "\n")
	}
	if e.running {
		switch {
		case e.reconnecting != nil:
			b.WriteString(styleWarn.Render(fmt.Sprintf("⟳ reconnecting… (attempt %d)", e.reconnecting.Attempt)) + "\n")
		case e.cancelling:
			b.WriteString(styleMuted.Render(m.spin.View()+" cancelling… (Ctrl-C again to quit)") + "\n")
		case e.acc.Text() == "":
			b.WriteString(statusLine(e.acc, m.spin.View()) + "\n")
		}
	}
	if e.err != nil {
		b.WriteString(styleErr.Render(markErr+" "+errText(e.err)) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// pickerView lists the conversations to open.
func (m *model) pickerView() string {
	if len(m.convs) == 0 {
		return styleMuted.Render("No conversations yet. Esc goes back.")
	}
	var b strings.Builder
	b.WriteString(styleName.Render("Conversations") + styleMuted.Render(" — ↑/↓ choose, Enter opens, Esc goes back") + "\n\n")
	for i, cv := range m.convs {
		cursor := "  "
		line := SanitizeLine(cv.Title)
		if line == "" {
			line = "(untitled)"
		}
		line += styleMuted.Render("  " + cv.UpdatedAt.Local().Format(time.DateTime) + "  " + cv.ID)
		if i == m.cursor {
			cursor = styleUser.Render("› ")
			line = styleName.Render(line)
		}
		b.WriteString(ansi.Truncate(cursor+line, m.width, "…") + "\n")
	}
	return b.String()
}

// View implements tea.Model.
func (m *model) View() tea.View {
	head := "toolmark · " + ModelName(m.info)
	if m.convID != "" {
		head += " · " + m.convID
	}
	var status string
	switch {
	case m.notice != "":
		status = styleWarn.Render(m.notice)
	case m.expanded:
		status = styleLabel.Render("expanded view — a snapshot; Ctrl-O returns to the live view")
	default:
		status = styleMuted.Render("Ctrl-O expanded view · Ctrl-C cancel/quit · PgUp/PgDn scroll · /list /new /quit")
	}
	body := lipglossJoin(
		ansi.Truncate(styleHeader.Render(head), m.width, "…"),
		m.vp.View(),
		ansi.Truncate(status, m.width, "…"),
		m.input.View(),
	)
	v := tea.NewView(body)
	v.AltScreen = true
	v.WindowTitle = "toolmark"
	return v
}

func lipglossJoin(lines ...string) string { return strings.Join(lines, "\n") }

// errText is an error as the screen shows it: short, one line.
func errText(err error) string {
	if code := client.ErrorCode(err); code == toolmark.EUNAUTHORIZED {
		return "not authorised (check --token)"
	}
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return SanitizeLine(apiErr.Message)
	}
	return SanitizeLine(err.Error())
}
