package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
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
	// Style is the markdown style, a glamour standard style name ("dark",
	// "light", "notty", …); "" picks dark or light from the terminal's
	// background. The command sets it from GLAMOUR_STYLE.
	Style string
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
	// The program looks for a new view three times a frame: the chat
	// draws a streaming answer at most once a frame (frameInterval), and a
	// draw — the answer's end above all — reaches the screen within a third
	// of one. A view that did not change costs a comparison.
	_, err = tea.NewProgram(m, tea.WithContext(ctx), tea.WithFPS(int(3*time.Second/frameInterval))).Run()
	m.stream.stop()
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

// mode is what the screen shows.
type mode int

const (
	modeChat   mode = iota
	modePicker      // the list of conversations
	modeHelp        // the help screen
	modeTools       // the /tools screen
)

// quitWindow is how long a first Ctrl-C on an idle prompt waits for the
// second that quits.
const quitWindow = 3 * time.Second

// doublePress is how soon after the Ctrl-C that cancelled an answer a
// second one still quits although the answer ended meanwhile (the cancel
// reaches the server and back faster than a person presses twice).
const doublePress = 300 * time.Millisecond

// model is the full-screen client, the root of its Bubble Tea models: the
// chat (transcript and live turn), the picker (conversations), the
// composer (input and commands) and the live turn's stream. Each owns its
// state; the model routes messages and lays the screen out.
type model struct {
	ctx  context.Context
	cfg  Config
	c    *client.Client
	info client.Info

	width, height int
	spin          spinner.Model
	chat          *chat
	picker        picker
	input         composer
	stream        stream

	mode      mode
	notice    string
	quitArmed time.Time // when a first Ctrl-C on an idle prompt asked to confirm
	cancelled time.Time // when a Ctrl-C last cancelled an answer
	pending   int       // cancel requests in flight, let finish before quitting
	quitting  bool

	tools   client.Tools // what /tools shows
	modelID string       // the model picked with /model ID ("": the conversation's)
	// attached are the files uploaded with /attach, for the next message.
	attached []toolmark.Upload
	watch    convWatch // the open conversation's watch (watch.go)
}

func newModel(ctx context.Context, cfg Config, info client.Info) *model {
	m := &model{ctx: ctx, cfg: cfg, c: cfg.Client, info: info, width: 80, height: 24,
		spin:  spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(styleSpinner)),
		input: newComposer(), stream: stream{c: cfg.Client}}
	m.chat = newChat(m.width, cfg.Style)
	m.chat.convID = cfg.ConversationID
	return m
}

// Init implements tea.Model.
func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.input.focus()}
	if m.cfg.Style == "" {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.chat.convID != "" {
		cmds = append(cmds, m.loadHistory(m.chat.convID))
	}
	return tea.Batch(cmds...)
}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.update(msg)
	if w := m.rewatch(); w != nil { // the open conversation changed
		cmd = tea.Batch(cmd, w)
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case watchMsg:
		return m, m.watched(msg)
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.setWidth(m.width)
		m.chat.resize(m.width, m.bodyHeight())
		return m, nil
	case tea.BackgroundColorMsg:
		m.input.setDark(msg.IsDark())
		if m.cfg.Style == "" {
			style := "light"
			if msg.IsDark() {
				style = "dark"
			}
			m.chat.setStyle(style)
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		m.input.paste(msg)
		m.chat.resize(m.width, m.bodyHeight())
		return m, nil
	case spinner.TickMsg:
		if !m.chat.running() {
			return m, nil // the spinner stops with the turn
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		m.chat.frame = m.spin.View()
		return m, tea.Batch(cmd, m.chat.changed())
	case frameMsg:
		return m, m.chat.frameDue()
	case settleMsg:
		m.chat.settle()
		return m, nil
	case attachedMsg:
		m.attached = append(m.attached, msg.upload)
		m.notice = attachedLine(m.attached)
		return m, nil
	case againMsg:
		return m, m.replaceAgain(msg)
	case modelMsg:
		m.modelID, m.notice = msg.id, "The next answers come from "+SanitizeLine(msg.label)+"."
		return m, nil
	}
	return m.updateTurn(msg)
}

// bodyHeight is the height left for the transcript: the screen less the
// header, the status line and the composer.
func (m *model) bodyHeight() int { return max(m.height-2-m.input.height(), 1) }

// View implements tea.Model.
func (m *model) View() tea.View {
	head := "toolmark · " + ModelName(m.info)
	if t := SanitizeLine(m.chat.title); t != "" {
		head += " · " + t // the conversation's title; its id is in /list
	} else if m.chat.convID != "" {
		head += " · " + m.chat.convID
	}
	var body string
	switch m.mode {
	case modePicker:
		body = m.picker.view(m.width, m.bodyHeight())
	case modeHelp:
		body = helpView(m.width, m.bodyHeight())
	case modeTools:
		body = toolsView(m.tools, m.width, m.bodyHeight())
	default:
		body = m.chat.view()
	}
	v := tea.NewView(joinLines(
		ansi.Truncate(styleHeader.Render(head), m.width, "…"),
		body,
		ansi.Truncate(m.statusLine(), m.width, "…"),
		m.input.view(),
	))
	v.AltScreen = true
	v.WindowTitle = "toolmark"
	if t := m.chat.title; t != "" {
		v.WindowTitle = "toolmark · " + SanitizeLine(t)
	}
	return v
}

// statusLine is the line above the composer: a notice, or the key hints.
func (m *model) statusLine() string {
	switch {
	case m.notice != "":
		return styleWarn.Render(m.notice)
	case m.mode == modeChat && m.chat.expanded:
		return styleLabel.Render("expanded view — a snapshot; Ctrl-O returns to the live view")
	}
	return styleMuted.Render(hints(m.width, m.mode, m.chat.running()))
}

// joinLines joins lines in one copy (the body is most of the screen).
func joinLines(lines ...string) string { return strings.Join(lines, "\n") }
