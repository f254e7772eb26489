package simplifiedagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/modelerr"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Defaults of Request.
const (
	DefaultMaxRounds   = 8
	DefaultToolTimeout = 60 * time.Second
	DefaultCancelGrace = time.Second
	// MaxToolResultBytes caps the result text a tool hands back to the
	// model and reports in tool_call_success.
	MaxToolResultBytes = 16 << 10
)

// Tool is a tool the model may call. Its method set is that of langchaingo's
// tools.Tool, so any langchaingo tool is a Tool.
//
// A tool may also implement ParametersTool, TagAttrsTool and ResultAttrsTool
// to describe its arguments and the attributes its tag shows.
type Tool interface {
	Name() string
	Description() string
	Call(ctx context.Context, input string) (string, error)
}

// ParametersTool is a Tool that describes its arguments as a JSON schema
// object. Such a tool receives the model's JSON arguments as its input. A
// tool without it is offered with one string argument, "input", and
// receives that string.
type ParametersTool interface {
	Parameters() map[string]any
}

// TagAttrsTool is a Tool that shows attributes on its tag as soon as they
// are known from the (partial) arguments, such as query or url.
type TagAttrsTool interface {
	TagAttrs(args map[string]any) []toolcallmarkup.Attr
}

// ResultAttrsTool is a Tool that adds attributes to its tag on success, such
// as count.
type ResultAttrsTool interface {
	ResultAttrs(result string) []toolcallmarkup.Attr
}

// TimeoutTool is a Tool that needs a timeout other than
// Request.ToolTimeout, such as a sub-agent that makes several model calls.
type TimeoutTool interface {
	Timeout() time.Duration
}

// untaggedTool marks tools that report through their own events (todo_list)
// instead of a tag and the tool_call_* events.
type untaggedTool interface {
	untagged()
}

// Request is the input of Run.
type Request struct {
	Model   llms.Model
	History []llms.MessageContent // earlier turns, see BuildHistory
	Input   string                // the user's message
	// Attachments are the files attached to Input, with their bytes
	// (UserParts says how the model gets them).
	Attachments []toolmark.Upload
	// AttachmentTextBudget bounds the bytes of text files the model gets
	// [DefaultAttachmentTextBudget].
	AttachmentTextBudget int
	// Documents says that the model takes PDFs as documents; without it a
	// PDF goes as its text (Upload.Text), within AttachmentTextBudget.
	Documents bool
	Tools     []Tool
	System    string // system prompt; "" for none
	// MaxRounds bounds the model calls; the last one is made without tools
	// so that it answers. Default DefaultMaxRounds.
	MaxRounds int
	// ToolTimeout bounds each tool call. Default DefaultToolTimeout.
	ToolTimeout time.Duration
	// CancelGrace is how long a tool that ignores its context may run on
	// after cancellation or its timeout before it is abandoned. Default
	// DefaultCancelGrace.
	CancelGrace time.Duration
	// StatusText writes the status line of a tool call into its events
	// (ToolCallData.StatusText). Default statustext.Text.
	StatusText statustext.Func
	// Resume, when set, continues an answer another server began: the
	// model sees Input followed by the answer so far (its finished tool
	// calls with their results and its text) and goes on from there.
	Resume *toolmark.Resume
	// Retry is how a failed model call is tried again (see RetryPolicy).
	Retry RetryPolicy
	// Logger receives what people do not see: model errors in full, retries.
	// Default slog.Default().
	Logger *slog.Logger
	// Callbacks, when set, also receives the loop's langchaingo callbacks
	// (model start, end and error, streamed text, tool start, end and
	// error; a tool's context holds its id, see ToolCallIDFromContext), for
	// logging or tracing.
	Callbacks callbacks.Handler
}

// Result is the outcome of Run.
type Result struct {
	Answer    string // the text of the model's last reply that had any, as plain text
	Rounds    int
	ToolCalls []toolmark.ToolCallRecord
	Todos     []toolmark.Todo
}

// Run answers req.Input with req.Model and req.Tools, reporting every step
// to emit (which may be nil).
//
// On error the returned Result still holds the content with every started
// tag final. When ctx is cancelled the error wraps ctx.Err().
func Run(ctx context.Context, req Request, emit toolmark.EmitFunc) (Result, error) {
	if req.Model == nil {
		return Result{}, toolmark.Errorf(toolmark.EINVALID, "simplifiedagent: no model")
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := newSession(emit, req.StatusText, cancel, context.WithoutCancel(parent))
	if req.Resume != nil {
		s.resume(req.Resume)
	}
	l := newLoop(s, req, "", true)
	answer, rounds, err := l.run(ctx)
	if err == nil {
		if e := s.emitError(); e != nil {
			err = e
		}
	}
	s.finish(err, ctx.Err() != nil)
	res := Result{
		Answer:    answer,
		Rounds:    rounds,
		ToolCalls: s.records(),
		Todos:     s.todoList(),
	}
	if err != nil && parent.Err() != nil && !errors.Is(err, parent.Err()) {
		err = fmt.Errorf("%w (%w)", parent.Err(), err)
	}
	return res, err
}

// ModelError is the error of Run when a model call fails for good (an
// error answer, an error inside the stream, a cut stream, after the
// retries RetryPolicy allows). Err is a *modelerr.Error: toolmark.ErrorCode
// of a ModelError is its code (rate_limited, overloaded, auth, …) and
// toolmark.ErrorMessage the short sentence people see; Error, for the log,
// has the whole cause.
type ModelError struct {
	Round int // the failed round, 1-based
	Err   error
}

// Error implements error.
func (e *ModelError) Error() string { return fmt.Sprintf("model round %d: %v", e.Round, e.Err) }

// Unwrap returns the model's error.
func (e *ModelError) Unwrap() error { return e.Err }

// log returns the loop's logger.
func (l *loop) log() *slog.Logger {
	if l.req.Logger != nil {
		return l.req.Logger
	}
	return slog.Default()
}

// loop runs the rounds of one agent: the top-level one, or a sub-agent whose
// tags nest under parentID and whose text is not shown.
type loop struct {
	s        *session
	req      Request
	parentID string
	showText bool
	tools    map[string]Tool
	defs     []llms.Tool
}

func newLoop(s *session, req Request, parentID string, showText bool) *loop {
	if req.MaxRounds <= 0 {
		req.MaxRounds = DefaultMaxRounds
	}
	if req.ToolTimeout <= 0 {
		req.ToolTimeout = DefaultToolTimeout
	}
	if req.CancelGrace <= 0 {
		req.CancelGrace = DefaultCancelGrace
	}
	l := &loop{s: s, req: req, parentID: parentID, showText: showText, tools: map[string]Tool{}}
	for _, t := range req.Tools {
		l.tools[t.Name()] = t
		l.defs = append(l.defs, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name:        t.Name(),
			Description: t.Description(),
			Parameters:  parametersOf(t),
		}})
	}
	return l
}

func parametersOf(t Tool) map[string]any {
	if p, ok := t.(ParametersTool); ok {
		return p.Parameters()
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"input": map[string]any{"type": "string", "description": "the input of the tool"},
		},
		"required": []string{"input"},
	}
}

// questionParts is the question with its attached files, text files cut
// to the request's budget.
func (l *loop) questionParts() []llms.ContentPart {
	budget := l.req.AttachmentTextBudget
	if budget <= 0 {
		budget = DefaultAttachmentTextBudget
	}
	return UserParts(l.req.Input, l.req.Attachments, budget, l.req.Documents)
}

// run executes the rounds and returns the last answer text.
func (l *loop) run(ctx context.Context) (answer string, rounds int, err error) {
	var msgs []llms.MessageContent
	if l.req.System != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, l.req.System))
	}
	msgs = append(msgs, l.req.History...)
	if r := l.req.Resume; r != nil && l.parentID == "" {
		var done []toolmark.ToolCallRecord
		for _, c := range r.ToolCalls {
			if s := toolcallmarkup.Status(c.Status); s == toolcallmarkup.StatusSuccess || s == toolcallmarkup.StatusError {
				done = append(done, c)
			}
		}
		start := len(msgs)
		msgs = append(msgs, BuildHistory("", []toolmark.HistoryTurn{{UserText: l.req.Input, ToolCalls: done, Reasoning: r.Reasoning}})...)
		// The question goes with its files, as when the answer began.
		msgs[start].Parts = l.questionParts()
		// The answer so far as it stands, trailing space included: the
		// model goes on right after its last character.
		if text := strings.TrimLeft(visibleText(r.Content), " \n"); strings.TrimSpace(text) != "" {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, text))
		}
	} else {
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: l.questionParts()})
	}
	defer func() {
		if err != nil {
			l.s.finalizeCalls(l, err, ctx.Err() != nil)
		}
	}()
	for round := 1; round <= l.req.MaxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return answer, rounds, fmt.Errorf("before round %d: %w", round, context.Cause(ctx))
		}
		rounds = round
		l.s.roundStarted(l, round)
		offerTools := len(l.defs) > 0 && round < l.req.MaxRounds
		rep, err := l.generate(ctx, msgs, offerTools, round)
		if err != nil {
			if ctx.Err() != nil {
				return answer, rounds, fmt.Errorf("model round %d: %w: %w", round, context.Cause(ctx), err)
			}
			return answer, rounds, &ModelError{Round: round, Err: modelerr.Classify(err)}
		}
		if rep.text != "" {
			// A model may tick its plan after its answer and then end
			// with nothing more to say: the answer is its last words.
			answer = rep.text
		}
		if err := stopError(rep.stop); err != nil {
			return answer, rounds, &ModelError{Round: round, Err: err}
		}
		calls := rep.calls
		if len(calls) == 0 && rep.stop == stopPauseTurn {
			msgs = append(msgs, assistantMessage(rep))
			continue
		}
		if len(calls) == 0 {
			return answer, rounds, nil
		}
		msgs = append(msgs, assistantMessage(rep))
		l.execute(ctx, calls)
		if ctx.Err() != nil {
			return answer, rounds, fmt.Errorf("round %d: %w", round, context.Cause(ctx))
		}
		for _, c := range calls {
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: l.toolResultParts(c)})
		}
	}
	return answer, rounds, nil
}

// argsText returns the call's arguments as sent back to the model: valid
// JSON, "{}" when the model sent none or sent something unparseable.
func (c *call) argsText() string {
	a := strings.TrimSpace(c.args.String())
	if a == "" || !json.Valid([]byte(a)) {
		return "{}"
	}
	return a
}

func (c *call) modelResult() string {
	if c.status == toolcallmarkup.StatusSuccess {
		return c.result
	}
	return "error: " + c.errText
}
