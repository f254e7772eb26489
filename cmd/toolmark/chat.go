package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/tui"
)

// chatUsage is the help text of toolmark chat.
const chatUsage = `usage: toolmark chat [flags] [message]

Talks to a toolmark server from the terminal.

In a terminal, without -m, it opens the full-screen client: the answer
streams as rendered markdown with a live line per tool call; Ctrl-O
switches to the expanded view; Ctrl-C cancels an answer, a second Ctrl-C
quits; /list opens an earlier conversation, /new starts one, /quit quits.

With -m TEXT (or a message argument), or -m - to read the message from
standard input, it sends one message, prints the answer as it streams and
exits: rendered in a terminal, plain markdown when the output is piped.
--quiet prints only the answer, --json one JSON event per line.
When standard input or output is not a terminal and no -m is given, it
reads messages line by line.

Exit codes: 0 the answer completed, 1 it failed (or another error),
2 usage, 3 the answer was cancelled, 4 not authorised, 5 server unreachable.

Environment: TOOLMARK_SERVER (default for --server), TOOLMARK_TOKEN
(default for --token), GLAMOUR_STYLE (the markdown style, "dark" or
"light"; by default the terminal's background picks one).

flags:
`

// The exit codes of toolmark chat.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitCancelled   = 3
	exitAuth        = 4
	exitUnreachable = 5
)

// exitError carries the exit code of a failed command to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode returns the process exit code.
func (e *exitError) ExitCode() int { return e.code }

// chatExit gives err the exit code of its kind.
func chatExit(err error) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	code := exitFailed
	var apiErr *client.APIError
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.Is(err, tui.ErrTurnCancelled):
		code = exitCancelled
	case client.ErrorCode(err) == toolmark.EUNAUTHORIZED:
		code = exitAuth
	case errors.As(err, &apiErr):
		code = exitFailed
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		code = exitUnreachable
	}
	return &exitError{code: code, err: err}
}

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
	message := fs.String("m", "", "send this `message` (- reads it from standard input), print the answer and exit")
	asJSON := fs.Bool("json", false, "print each event of the answer as one line of JSON")
	quiet := fs.Bool("quiet", false, "print only the answer's text")
	list := fs.Bool("list", false, "list the conversations and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: exitUsage, err: err}
	}
	usage := func(msg string) error {
		return &exitError{code: exitUsage, err: errors.New(msg)}
	}
	if *message != "" && fs.NArg() > 0 {
		return usage("give the message with -m or as arguments, not both")
	}
	messageGiven := fs.NArg() > 0 || given(fs, "m")
	if *message == "" && fs.NArg() > 0 {
		*message = strings.Join(fs.Args(), " ")
	}
	if messageGiven && strings.TrimSpace(*message) == "" {
		return usage("the message is empty: give the text to send after -m, or leave -m out to chat")
	}
	if *asJSON && *quiet {
		return usage("--json and --quiet exclude each other")
	}
	if *message == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20+1))
		if err != nil {
			return usage("reading the message from standard input: " + err.Error())
		}
		*message = strings.TrimSpace(string(b))
		if *message == "" {
			return usage("the message read from standard input is empty")
		}
	}
	c := client.New(*server, client.WithToken(*token))
	if *list {
		return chatExit(listConversations(ctx, c, stdout))
	}

	if *message == "" && !*asJSON && !*quiet && isTerminal(stdin) && isTerminal(stdout) {
		// The full-screen client reads Ctrl-C as a key; a SIGTERM (ctx)
		// ends it.
		signal.Ignore(os.Interrupt)
		defer signal.Reset(os.Interrupt)
		debug.SetGCPercent(400) // a small heap of short-lived frames: collect half as often
		return chatExit(tui.Run(ctx, tui.Config{Client: c, ConversationID: *convID, Server: *server, Style: os.Getenv("GLAMOUR_STYLE")}))
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

	opts := tui.Options{Client: c, ConversationID: *convID, Stdout: stdout, Stderr: stderr, Interrupts: interrupts}
	switch {
	case *asJSON:
		opts.Output = tui.OutputJSON
	case *quiet:
		opts.Output = tui.OutputQuiet
	case *message != "" && isTerminal(stdout):
		// In a terminal the answer is rendered as the full-screen client
		// renders it; piped, it stays the plain markdown.
		opts.Output = tui.OutputRendered
		opts.Style, opts.Width = terminalStyle(stdin, stdout)
	}
	if *message != "" {
		_, err := tui.Once(root, opts, *message)
		return chatExit(err)
	}
	if *asJSON || *quiet {
		return usage("--json and --quiet need a message (-m)")
	}
	info, err := c.Info(root)
	if err != nil {
		return chatExit(fmt.Errorf("connecting to %s: %w", *server, err))
	}
	fmt.Fprintf(stderr, "toolmark %s · model %s · Ctrl-C cancels an answer, twice quits, /new, /quit\n", *server, tui.ModelName(info))
	return chatExit(tui.Lines(root, opts, stdin))
}

// listConversations prints the caller's conversations, newest first.
func listConversations(ctx context.Context, c *client.Client, w io.Writer) error {
	convs, err := c.ListConversations(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, cv := range convs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cv.ID, cv.UpdatedAt.Local().Format(time.DateTime), tui.SanitizeLine(cv.Title))
	}
	return tw.Flush()
}

// terminalStyle is the markdown style for the terminal on out — GLAMOUR_STYLE,
// or light or dark after the terminal's background — and its width.
func terminalStyle(in io.Reader, out io.Writer) (style string, width int) {
	o, _ := out.(*os.File)
	if o == nil {
		return "dark", 80
	}
	width = 80
	if w, _, err := term.GetSize(o.Fd()); err == nil && w > 0 {
		width = w
	}
	if style = os.Getenv("GLAMOUR_STYLE"); style != "" {
		return style, width
	}
	i, _ := in.(*os.File)
	if i == nil || !isTerminal(i) {
		i = o // a terminal answers on the descriptor it was asked on
	}
	if lipgloss.HasDarkBackground(i, o) {
		return "dark", width
	}
	return "light", width
}

// isTerminal reports whether f is a terminal.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(fd.Fd())
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
