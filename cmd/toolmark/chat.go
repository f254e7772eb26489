package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// chatUsage is the help text of toolmark chat.
const chatUsage = `usage: toolmark chat [flags] [message]

Talks to a toolmark server from the terminal. With -m (or a message
argument) it sends one message, prints the answer as it streams and exits;
otherwise it reads messages line by line. Ctrl-C during an answer cancels
the turn; a second Ctrl-C quits. /new starts a new conversation, /quit
quits.

Environment: TOOLMARK_SERVER (default for --server), TOOLMARK_TOKEN
(default for --token).

flags:
`

// runChat is the body of "toolmark chat".
func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, chatUsage)
		fs.PrintDefaults()
	}
	server := fs.String("server", envOr("TOOLMARK_SERVER", "http://127.0.0.1:8080"), "server base `URL`")
	token := fs.String("token", os.Getenv("TOOLMARK_TOKEN"), "API `token` (servers in token auth mode)")
	convID := fs.String("conversation", "", "continue the conversation with this `ID`")
	message := fs.String("m", "", "send this `message`, print the answer and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *message == "" && fs.NArg() > 0 {
		*message = strings.Join(fs.Args(), " ")
	}

	// Ctrl-C is read from the signal itself, not from ctx: the caller's
	// context may end on the same Ctrl-C (signal.NotifyContext), but here the
	// first one only cancels the answer being written.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	root, quit := context.WithCancel(context.WithoutCancel(ctx))
	defer quit()
	interrupts := make(chan struct{}, 4)
	go dispatchSignals(ctx, root, sigs, interrupts, quit)

	s := &chatSession{
		c:          client.New(*server, client.WithToken(*token)),
		convID:     *convID,
		out:        stdout,
		errOut:     stderr,
		interrupts: interrupts,
	}
	if *message != "" {
		return s.send(root, *message)
	}
	return s.interactive(root, stdin, *server)
}

// dispatchSignals turns each SIGINT into an interrupt and calls quit when
// ctx ends for another reason (SIGTERM) than a SIGINT.
func dispatchSignals(ctx, root context.Context, sigs <-chan os.Signal, interrupts chan<- struct{}, quit context.CancelFunc) {
	var lastSig time.Time
	forward := func() {
		lastSig = time.Now()
		select {
		case interrupts <- struct{}{}:
		default:
		}
	}
	ctxDone := ctx.Done()
	for {
		select {
		case <-root.Done():
			return
		case <-sigs:
			forward()
		case <-ctxDone:
			ctxDone = nil
			t := time.NewTimer(300 * time.Millisecond)
			select {
			case <-sigs:
				forward()
			case <-t.C:
			case <-root.Done():
				t.Stop()
				return
			}
			t.Stop()
			if time.Since(lastSig) > time.Second {
				quit()
				return
			}
		}
	}
}

// errQuit ends the interactive loop after a second Ctrl-C.
var errQuit = errors.New("interrupted")

// chatSession is one run of toolmark chat.
type chatSession struct {
	c      *client.Client
	convID string
	out    io.Writer
	errOut io.Writer
	// interrupts receives one value per Ctrl-C.
	interrupts <-chan struct{}
}

// interactive reads messages from in until EOF, /quit or Ctrl-C at the
// prompt.
func (s *chatSession) interactive(ctx context.Context, in io.Reader, server string) error {
	info, err := s.c.Info(ctx)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", server, err)
	}
	model := info.Model
	if info.Demo {
		model += " (offline demo model)"
	}
	fmt.Fprintf(s.errOut, "toolmark %s · model %s · Ctrl-C cancels an answer, twice quits, /new, /quit\n", server, model)

	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
	}()
	for {
		fmt.Fprint(s.out, "\n› ")
		var line string
		select {
		case line = <-lines:
		case err := <-readErr:
			fmt.Fprintln(s.out)
			return err
		case <-s.interrupts:
			fmt.Fprintln(s.out)
			return nil
		case <-ctx.Done():
			fmt.Fprintln(s.out)
			return nil
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		case "/new":
			s.convID = ""
			fmt.Fprintln(s.errOut, "(a new conversation starts with your next message)")
			continue
		}
		err := s.send(ctx, line)
		switch {
		case errors.Is(err, errQuit):
			return nil
		case err != nil:
			fmt.Fprintf(s.errOut, "error: %v\n", err)
		}
	}
}

// send posts one message as a turn and prints the answer as it streams.
func (s *chatSession) send(ctx context.Context, text string) error {
	if s.convID == "" {
		conv, err := s.c.CreateConversation(ctx, title(text))
		if err != nil {
			return fmt.Errorf("creating a conversation: %w", err)
		}
		s.convID = conv.ID
		fmt.Fprintf(s.errOut, "(conversation %s — continue it with --conversation %s)\n", conv.ID, conv.ID)
	}
	key := newIdempotencyKey()
	var ti client.TurnInfo
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		ti, err = s.c.PostTurn(ctx, s.convID, text, key)
		var apiErr *client.APIError
		if err == nil || errors.As(err, &apiErr) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 500 * time.Millisecond) // same key: a retry cannot start a second turn
	}
	if err != nil {
		if client.ErrorCode(err) == toolmark.ECONFLICT {
			return fmt.Errorf("an answer is still being written in this conversation: %w", err)
		}
		return fmt.Errorf("sending the message: %w", err)
	}
	return s.follow(ctx, ti.Turn.ID)
}

// follow prints a turn's events until it ends. The first Ctrl-C cancels
// the turn on the server and keeps following until the server confirms; a
// second one stops following at once. When ctx ends, follow returns.
func (s *chatSession) follow(ctx context.Context, turnID string) error {
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	quit := make(chan struct{})
	watchDone := make(chan struct{})
	followDone := make(chan struct{})
	var cancelReq sync.WaitGroup
	defer func() {
		close(followDone)
		<-watchDone
		// A cancel request in flight is let finish (briefly) even when the
		// second Ctrl-C quits: the turn must not go on without anyone.
		waited := make(chan struct{})
		go func() { cancelReq.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(3 * time.Second):
		}
	}()
	go func() {
		defer close(watchDone)
		cancelled := false
		for {
			select {
			case <-followDone:
				return
			case <-s.interrupts:
			}
			if cancelled {
				close(quit)
				stop()
				return
			}
			cancelled = true
			fmt.Fprintln(s.errOut, "\n⊘ cancelling the answer… (Ctrl-C again to quit)")
			cancelReq.Add(1)
			go func() {
				defer cancelReq.Done()
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				if _, err := s.c.CancelTurn(cctx, turnID); err != nil {
					fmt.Fprintf(s.errOut, "cancelling: %v\n", err)
				}
			}()
		}
	}()

	p := newPrinter(s.out)
	var end *toolmark.TurnEndData
	err := s.c.Follow(fctx, turnID, 0, func(ev toolmark.Event) error {
		if d, ok := p.event(ev); ok {
			end = &d
		}
		return nil
	})
	p.finish()
	select {
	case <-quit:
		return errQuit
	default:
	}
	if err != nil {
		return fmt.Errorf("following the answer: %w", err)
	}
	if end == nil { // ended by a snapshot of a finished turn
		return nil
	}
	switch end.Status {
	case toolmark.TurnCompleted:
		return nil
	case toolmark.TurnCancelled:
		fmt.Fprintln(s.errOut, "⊘ answer cancelled")
		return errors.New("turn cancelled")
	default:
		msg := end.Error
		if msg == "" {
			msg = string(end.Status)
		}
		return fmt.Errorf("the answer failed: %s", msg)
	}
}

// title makes a conversation title from its first message.
func title(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 60 {
		s = markdown.Truncate(s, 60)
	}
	return s
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// printer turns a turn's events into terminal output: the answer's text as
// it streams, a status line per tool call when it starts running and when
// it ends, and the todo list when it changes.
type printer struct {
	w         io.Writer
	atBOL     bool   // the cursor is at the beginning of a line
	afterLine bool   // the last output was a status line
	pending   string // text held back: it may be the start of an escape sequence
	shown     string // the answer's text printed so far (for snapshots)
	calls     map[string]toolcallmarkup.ToolCall
	depth     map[string]int
	lastTodos string
	texts     map[string]markdown.StatusTextFunc
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, atBOL: true, afterLine: true, calls: map[string]toolcallmarkup.ToolCall{}, depth: map[string]int{},
		texts: markdown.DefaultStatusTexts()}
}

// event prints ev and returns the end data when ev ends the turn.
func (p *printer) event(ev toolmark.Event) (toolmark.TurnEndData, bool) {
	switch ev.Type {
	case toolmark.EventTurnQueued:
		var d toolmark.TurnQueuedData
		if json.Unmarshal(ev.Data, &d) == nil && d.Position > 0 {
			p.line(0, "… waiting for a free slot (position %d)", d.Position)
		}
	case toolmark.EventTextDelta:
		var d toolmark.TextDeltaData
		if json.Unmarshal(ev.Data, &d) == nil {
			p.text(d.Text)
		}
	case toolmark.EventToolCallStarted, toolmark.EventToolCallDelta, toolmark.EventToolCallRunning,
		toolmark.EventToolCallSuccess, toolmark.EventToolCallError:
		var d toolmark.ToolCallData
		if json.Unmarshal(ev.Data, &d) == nil {
			p.toolCall(ev.Type, d)
		}
	case toolmark.EventTodoUpdate:
		var d toolmark.TodoUpdateData
		if json.Unmarshal(ev.Data, &d) == nil {
			p.todos(d.Todos)
		}
	case toolmark.EventSnapshot:
		var d toolmark.SnapshotData
		if json.Unmarshal(ev.Data, &d) == nil {
			p.snapshot(d)
		}
	case toolmark.EventTurnCompleted, toolmark.EventTurnFailed, toolmark.EventTurnCancelled:
		var d toolmark.TurnEndData
		_ = json.Unmarshal(ev.Data, &d)
		if d.Status == "" {
			d.Status = map[toolmark.EventType]toolmark.TurnStatus{toolmark.EventTurnCompleted: toolmark.TurnCompleted,
				toolmark.EventTurnFailed: toolmark.TurnFailed, toolmark.EventTurnCancelled: toolmark.TurnCancelled}[ev.Type]
		}
		p.flush()
		return d, true
	}
	return toolmark.TurnEndData{}, false
}

// text prints neutralised answer text as the model wrote it. A tail that
// could be the start of an escaped "<ToolCall" ("&", "&amp;", "&lt;Tool"…)
// waits for the next piece, so that RestoreText sees it whole.
func (p *printer) text(s string) {
	s = p.pending + s
	p.pending = ""
	if i := strings.LastIndexByte(s, '&'); i >= 0 && len(s)-i < 24 && !strings.ContainsAny(s[i:], " \t\r\n>\"") {
		s, p.pending = s[:i], s[i:]
	}
	p.write(toolcallmarkup.RestoreText(s))
}

func (p *printer) flush() {
	if p.pending != "" {
		s := p.pending
		p.pending = ""
		p.write(toolcallmarkup.RestoreText(s))
	}
}

func (p *printer) write(s string) {
	if p.afterLine {
		// The blank lines that separate text from a tool call in markdown
		// are not needed after a status line.
		s = strings.TrimLeft(s, "\n")
	}
	if s == "" {
		return
	}
	p.afterLine = false
	io.WriteString(p.w, s)
	p.shown += s
	p.atBOL = strings.HasSuffix(s, "\n")
}

// line prints a status line of its own, indented by depth.
func (p *printer) line(depth int, format string, args ...any) {
	p.flush()
	if !p.atBOL {
		io.WriteString(p.w, "\n")
	}
	fmt.Fprintf(p.w, "%s"+format+"\n", append([]any{strings.Repeat("  ", depth)}, args...)...)
	p.atBOL = true
	p.afterLine = true
}

func (p *printer) statusText(tc toolcallmarkup.ToolCall) string {
	if f := p.texts[tc.Type]; f != nil {
		return f(tc)
	}
	return markdown.GenericStatusText(tc)
}

func (p *printer) toolCall(typ toolmark.EventType, d toolmark.ToolCallData) {
	tc, ok := parseMarkup(d.Markup)
	if !ok {
		tc = toolcallmarkup.ToolCall{ID: d.ToolCallID, Type: d.Name, Status: toolcallmarkup.Status(d.Status), Error: d.Error}
	}
	if _, seen := p.calls[tc.ID]; !seen {
		if d.ParentID != "" {
			p.depth[tc.ID] = p.depth[d.ParentID] + 1
		}
	}
	prev, seen := p.calls[tc.ID]
	p.calls[tc.ID] = tc
	if seen && prev.Status == tc.Status {
		return // a delta: nothing new to show
	}
	depth := p.depth[tc.ID]
	switch tc.Status {
	case toolcallmarkup.StatusRunning:
		p.line(depth, "⠋ %s", p.statusText(tc))
	case toolcallmarkup.StatusSuccess:
		p.line(depth, "✓ %s", p.statusText(tc))
	case toolcallmarkup.StatusError:
		msg := tc.Error
		if msg == "" {
			msg = d.Error
		}
		if msg != "" {
			p.line(depth, "✗ %s: %s", p.statusText(tc), msg)
		} else {
			p.line(depth, "✗ %s", p.statusText(tc))
		}
	case toolcallmarkup.StatusCancelled:
		p.line(depth, "⊘ %s", p.statusText(tc))
	}
}

// parseMarkup reads the opening tag of a tool_call_* event.
func parseMarkup(markup string) (toolcallmarkup.ToolCall, bool) {
	calls := toolcallmarkup.Parse(markup + "</ToolCall>")
	if len(calls) != 1 {
		return toolcallmarkup.ToolCall{}, false
	}
	return calls[0], true
}

var todoMarks = map[toolmark.TodoStatus]string{toolmark.TodoPending: "☐", toolmark.TodoInProgress: "◐", toolmark.TodoDone: "☑"}

func (p *printer) todos(todos []toolmark.Todo) {
	var b strings.Builder
	for _, t := range todos {
		mark := todoMarks[t.Status]
		if mark == "" {
			mark = "☐"
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, t.Text)
	}
	if b.String() == p.lastTodos {
		return
	}
	p.lastTodos = b.String()
	p.line(0, "Plan:\n%s", strings.TrimSuffix(b.String(), "\n"))
}

// snapshot catches up with the content of a snapshot: the text the
// terminal has not shown yet is printed, and the tools' final states.
func (p *printer) snapshot(d toolmark.SnapshotData) {
	p.flush()
	var text strings.Builder
	last := 0
	for _, sp := range toolcallmarkup.Scan(d.Content) {
		if sp.Start >= last {
			text.WriteString(d.Content[last:sp.Start])
		}
		if sp.Parent < 0 && sp.End > last {
			last = sp.End
		}
		tc := sp.Call
		if prev, ok := p.calls[tc.ID]; !ok || prev.Status != tc.Status {
			if sp.Parent >= 0 {
				p.depth[tc.ID] = p.depth[tc.ParentID] + 1
			}
			p.calls[tc.ID] = tc
			if tc.Status.Final() {
				p.line(p.depth[tc.ID], "%s %s", map[toolcallmarkup.Status]string{toolcallmarkup.StatusSuccess: "✓",
					toolcallmarkup.StatusError: "✗", toolcallmarkup.StatusCancelled: "⊘"}[tc.Status], p.statusText(tc))
			}
		}
	}
	if last < len(d.Content) {
		text.WriteString(d.Content[last:])
	}
	full := toolcallmarkup.RestoreText(text.String())
	if strings.HasPrefix(full, p.shown) {
		p.write(full[len(p.shown):])
	} else {
		p.line(0, "[the answer so far]")
		p.write(full)
		p.shown = full
	}
	if len(d.Todos) > 0 {
		p.todos(d.Todos)
	}
}

// finish ends the output on a line of its own.
func (p *printer) finish() {
	p.flush()
	if !p.atBOL {
		io.WriteString(p.w, "\n")
		p.atBOL = true
	}
}
