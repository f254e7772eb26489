package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Output selects what the line-oriented client prints for a turn.
type Output int

// The outputs of the line-oriented client.
const (
	// OutputPlain prints the answer's text as it streams and a line per
	// tool call when it runs and when it ends, indented under its parent
	// for a sub-agent's calls, and the task list when it changes.
	OutputPlain Output = iota
	// OutputQuiet prints only the answer's text.
	OutputQuiet
	// OutputJSON prints every event of the turn as one line of JSON, as
	// the server sent it.
	OutputJSON
	// OutputRendered is OutputPlain for a terminal: the answer's text is
	// rendered as the full-screen client renders it (Options.Style and
	// Width), a block at a time as each block is finished, and the line
	// of a running tool call has a still mark, not a spinner that cannot
	// turn.
	OutputRendered
)

// Options configure the line-oriented client: Once and Lines.
type Options struct {
	Client         *client.Client
	ConversationID string // "" creates a conversation for the first message
	Output         Output
	Stdout, Stderr io.Writer
	// Style and Width are the markdown style (a glamour standard style:
	// "dark", "light", …; "" is dark) and the terminal's width (0: 80) of
	// OutputRendered.
	Style string
	Width int
	// Interrupts receives one value per Ctrl-C: the first cancels the
	// turn on the server and keeps following it to its end, the second
	// stops following at once.
	Interrupts <-chan struct{}
}

// Once sends text as one message, prints the turn as opts.Output says and
// returns when the turn has ended: nil when it completed, an error that
// wraps ErrTurnFailed or ErrTurnCancelled when it did not, or the
// client's error (an *client.APIError, a network error). It returns the
// conversation's id, also when the turn failed.
func Once(ctx context.Context, opts Options, text string) (string, error) {
	convID, ti, err := startTurn(ctx, opts.Client, opts.ConversationID, toolmark.TurnInput{Content: text})
	if err != nil {
		return convID, err
	}
	if opts.ConversationID == "" && (opts.Output == OutputPlain || opts.Output == OutputRendered) {
		fmt.Fprintf(opts.Stderr, "(conversation %s — continue it with --conversation %s)\n", convID, convID)
	}
	return convID, follow(ctx, opts, ti.Turn.ID)
}

// Lines reads messages line by line from in and sends each as Once does,
// in one conversation, until EOF or a line "/quit"; "/new" starts a new
// conversation. It returns the error of the last turn that did not
// complete, so a script sees a failure.
func Lines(ctx context.Context, opts Options, in io.Reader) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	var last error
	for {
		fmt.Fprint(opts.Stdout, "\n› ")
		var line string
		select {
		case line = <-lines:
		case err := <-readErr:
			fmt.Fprintln(opts.Stdout)
			return errors.Join(err, last)
		case <-opts.Interrupts:
			fmt.Fprintln(opts.Stdout)
			return last
		case <-ctx.Done():
			fmt.Fprintln(opts.Stdout)
			return last
		}
		switch line = strings.TrimSpace(line); line {
		case "":
			continue
		case "/quit", "/exit":
			return last
		case "/new":
			opts.ConversationID = ""
			fmt.Fprintln(opts.Stderr, "(a new conversation starts with your next message)")
			continue
		}
		conv, err := Once(ctx, opts, line)
		opts.ConversationID = conv
		if err != nil {
			last = err
			if !errors.Is(err, ErrTurnFailed) && !errors.Is(err, ErrTurnCancelled) {
				fmt.Fprintf(opts.Stderr, "error: %v\n", err)
			}
			if errors.Is(err, errQuit) {
				return err
			}
		}
	}
}

// errQuit is returned when a second Ctrl-C stopped following a turn.
var errQuit = fmt.Errorf("%w (quit while cancelling)", ErrTurnCancelled)

// follow prints a turn until it ends, handling Ctrl-C.
func follow(ctx context.Context, opts Options, turnID string) error {
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu        sync.Mutex
		quit      bool
		cancelReq sync.WaitGroup
	)
	done := make(chan struct{})
	defer func() {
		close(done)
		waitTimeout(&cancelReq, 3*time.Second) // the turn must not go on without anyone
	}()
	go func() {
		cancelled := false
		for {
			select {
			case <-done:
				return
			case <-opts.Interrupts:
			}
			if cancelled {
				mu.Lock()
				quit = true
				mu.Unlock()
				stop()
				return
			}
			cancelled = true
			if opts.Output != OutputJSON {
				fmt.Fprintln(opts.Stderr, "\n"+markCancelled+" cancelling the answer… (Ctrl-C again to quit)")
			}
			cancelReq.Add(1)
			go func() {
				defer cancelReq.Done()
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				if _, err := opts.Client.CancelTurn(cctx, turnID); err != nil {
					fmt.Fprintf(opts.Stderr, "cancelling: %v\n", err)
				}
			}()
		}
	}()

	p := newPrinter(opts)
	acc := client.NewAccumulator(p.handlers())
	reconnecting := false
	onConn := client.OnConnState(func(s client.ConnState) {
		switch {
		case !s.Connected:
			reconnecting = true
			fmt.Fprintf(opts.Stderr, "\n⟳ reconnecting… (attempt %d in %s)\n", s.Attempt, s.Wait.Round(100*time.Millisecond))
		case reconnecting:
			reconnecting = false
			fmt.Fprintln(opts.Stderr, "⟳ reconnected")
		}
	})
	var err error
	for ev, ferr := range opts.Client.Events(fctx, turnID, 0, onConn) {
		if ferr != nil {
			err = ferr
			break
		}
		if opts.Output == OutputJSON {
			p.json(ev)
		}
		if err = acc.Add(ev); err != nil {
			break
		}
	}
	p.finish()
	mu.Lock()
	quitting := quit
	mu.Unlock()
	if quitting {
		return errQuit
	}
	if err != nil {
		return fmt.Errorf("following the answer: %w", err)
	}
	end, ok := acc.End()
	if !ok {
		end.Status = acc.Status() // a snapshot of a finished turn ended the stream
	}
	if e := endError(end); e != nil {
		switch opts.Output {
		case OutputPlain:
			fmt.Fprintln(opts.Stderr, ansiFree(endLine(end)))
		case OutputRendered:
			fmt.Fprintln(opts.Stderr, endLine(end))
		}
		return e
	}
	return nil
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// printer writes a turn in one of the line-oriented outputs.
type printer struct {
	out       io.Writer
	mode      Output
	atBOL     bool // the output is at the beginning of a line
	afterLine bool // the last output was a status line
	depth     map[string]int
	// OutputRendered: the renderer, the text not printed yet (the block
	// being written) and whether the last output was a rendered block.
	md        *renderer
	pending   string
	afterText bool
}

func newPrinter(opts Options) *printer {
	p := &printer{out: opts.Stdout, mode: opts.Output, atBOL: true, afterLine: true, depth: map[string]int{}}
	if p.mode == OutputRendered {
		width := opts.Width
		if width <= 0 {
			width = 80
		}
		p.md = newRenderer(width, opts.Style)
	}
	return p
}

func (p *printer) handlers() *client.Handlers {
	switch p.mode {
	case OutputJSON:
		return nil
	case OutputQuiet:
		return &client.Handlers{Content: func(chunk, _ string) { p.text(chunk) }}
	case OutputRendered:
		return &client.Handlers{
			Content:  func(chunk, _ string) { p.renderText(chunk, false) },
			ToolCall: p.toolCall,
			Todos:    p.todos,
		}
	}
	return &client.Handlers{
		Content:  func(chunk, _ string) { p.text(chunk) },
		ToolCall: p.toolCall,
		Todos:    p.todos,
	}
}

// text prints a piece of the answer, sanitised.
func (p *printer) text(s string) {
	s = Sanitize(s)
	if p.afterLine {
		// The blank lines that separate text from a tool call in markdown
		// are not needed after a status line.
		s = strings.TrimLeft(s, "\n")
	}
	if s == "" {
		return
	}
	p.afterLine = false
	io.WriteString(p.out, s)
	p.atBOL = strings.HasSuffix(s, "\n")
}

// renderText adds a piece of the answer to the text not printed yet and
// prints the blocks of it that are finished (all of it when all is set),
// rendered.
func (p *printer) renderText(s string, all bool) {
	p.pending += Sanitize(s)
	done := p.pending
	if !all {
		done, p.pending = finishedBlocks(p.pending)
	} else {
		p.pending = ""
	}
	for _, b := range splitBlocks(done) {
		md := strings.Join(trimMargins(p.md.blockLines(b)), "\n")
		if md == "" {
			continue
		}
		if !p.atBOL {
			io.WriteString(p.out, "\n")
		}
		if p.afterText {
			io.WriteString(p.out, "\n")
		}
		io.WriteString(p.out, md+"\n")
		p.atBOL, p.afterText, p.afterLine = true, true, false
	}
}

// line prints a status line of its own, indented by depth.
func (p *printer) line(depth int, s string) {
	if p.mode == OutputRendered {
		p.renderText("", true) // the text before the line first
		p.afterText = false
	}
	if !p.atBOL {
		io.WriteString(p.out, "\n")
	}
	io.WriteString(p.out, strings.Repeat("  ", depth)+s+"\n")
	p.atBOL, p.afterLine = true, true
}

func (p *printer) toolCall(u client.ToolCallUpdate) {
	c := u.Call
	if u.Stage == client.StageStart && c.ParentID != "" {
		p.depth[c.ID] = p.depth[c.ParentID] + 1
	}
	text := SanitizeLine(statusText(c))
	if p.mode == OutputRendered {
		p.renderedToolLine(u)
		return
	}
	switch u.Stage {
	case client.StageRunning:
		p.line(p.depth[c.ID], "⠋ "+text)
	case client.StageEnd:
		switch c.Status {
		case "success":
			if c.Result != "" && !strings.Contains(text, c.Result) {
				text += " · " + SanitizeLine(c.Result)
			}
			p.line(p.depth[c.ID], markOK+" "+text)
		case "cancelled":
			p.line(p.depth[c.ID], markCancelled+" "+text)
		default:
			if c.Error != "" {
				text += ": " + SanitizeLine(c.Error)
			}
			p.line(p.depth[c.ID], markErr+" "+text)
		}
	}
}

// renderedToolLine prints a call's line when it runs and when it ends,
// coloured as in the full-screen client, a result the status text does not
// hold after it.
func (p *printer) renderedToolLine(u client.ToolCallUpdate) {
	c := u.Call
	var mark, more string
	switch {
	case u.Stage == client.StageRunning:
		mark = styleSpinner.Render(markRunning)
	case u.Stage != client.StageEnd:
		return
	case c.Status == toolcallmarkup.StatusSuccess:
		mark = styleOK.Render(markOK)
		if c.Result != "" && !strings.Contains(statusText(c), c.Result) {
			more = styleMuted.Render(" · " + SanitizeLine(c.Result))
		}
	case c.Status == toolcallmarkup.StatusCancelled:
		mark = styleMuted.Render(markCancelled)
	default:
		mark = styleErr.Render(markErr)
	}
	depth := p.depth[c.ID]
	p.line(depth, ansi.Truncate(callLine(mark, c)+more, max(p.md.width-2*depth, 20), "…"))
}

func (p *printer) todos(todos []toolmark.Todo) {
	done := 0
	var b strings.Builder
	for _, t := range todos {
		if t.Status == toolmark.TodoDone {
			done++
		}
		mark := todoMarks[t.Status]
		if mark == "" {
			mark = "○"
		}
		fmt.Fprintf(&b, "\n  %s %s", mark, SanitizeLine(t.Text))
	}
	p.line(0, fmt.Sprintf("Plan %d/%d:%s", done, len(todos), b.String()))
}

// json prints one event as a line of JSON. Control characters never reach
// the terminal raw: encoding/json escapes C0 ones, and C1 ones and DEL
// are escaped here (they can only occur inside strings).
func (p *printer) json(ev client.Event) {
	b, err := ev.MarshalJSON()
	if err != nil {
		return
	}
	p.out.Write(append(escapeJSONControls(b), '\n'))
}

func escapeJSONControls(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || r >= 0x80 && r <= 0x9f || r < 0x20 {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// finish ends the output on a line of its own.
func (p *printer) finish() {
	if p.mode == OutputRendered {
		p.renderText("", true)
	}
	if p.mode != OutputJSON && !p.atBOL {
		io.WriteString(p.out, "\n")
		p.atBOL = true
	}
}

// ansiFree drops the styling of a rendered line for plain output.
func ansiFree(s string) string { return Sanitize(s) }
