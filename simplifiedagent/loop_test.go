package simplifiedagent_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/llmstream"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// scripted is a non-streaming model that replies from a list and keeps
// the messages it was given.
type scripted struct {
	mu      sync.Mutex
	replies []*llms.ContentChoice
	seen    [][]llms.MessageContent
}

func (m *scripted) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, msgs)
	if len(m.replies) == 0 {
		return nil, errors.New("scripted: no more replies")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{r}}, nil
}

func (m *scripted) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

func toolCall(id, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// funcTool is a plain tool in the shape of langchaingo's tools.Tool.
type funcTool struct {
	name string
	fn   func(ctx context.Context, input string) (string, error)
}

func (f funcTool) Name() string                                        { return f.name }
func (f funcTool) Description() string                                 { return "test tool " + f.name }
func (f funcTool) Call(ctx context.Context, in string) (string, error) { return f.fn(ctx, in) }

func runChecked(t *testing.T, req simplifiedagent.Request) (simplifiedagent.Result, *recorder, error) {
	t.Helper()
	rec := newRecorder()
	res, err := simplifiedagent.Run(context.Background(), req, rec.emit)
	checkToolOrder(t, rec.all())
	checkAllFinal(t, replay(t, rec.all()))
	return res, rec, err
}

// TestNonStreamingModel: a model that never streams yields the same event
// kinds: its text as one text_delta, its calls started, running and final.
func TestNonStreamingModel(t *testing.T) {
	var gotInput string
	echo := funcTool{name: "echo", fn: func(_ context.Context, in string) (string, error) {
		gotInput = in
		return "echoed " + in, nil
	}}
	m := &scripted{replies: []*llms.ContentChoice{
		{Content: "Let me check.", ToolCalls: []llms.ToolCall{toolCall("c1", "echo", `{"input":"hi there"}`)}},
		{Content: "Done: echoed hi there."},
	}}
	res, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "echo hi", Tools: []simplifiedagent.Tool{echo}})
	if err != nil {
		t.Fatal(err)
	}
	content := rec.content(t)
	if gotInput != "hi there" {
		t.Errorf("plain tool got input %q, want the string argument", gotInput)
	}
	var types []string
	for _, e := range rec.all() {
		types = append(types, string(e.Type))
	}
	want := "round_started text_delta text_delta tool_call_started tool_call_delta tool_call_running tool_call_success round_started text_delta"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	wantContent := "Let me check.\n\n" + `<ToolCall type="echo" status="success" toolCallId="c1"></ToolCall>` + "\n\nDone: echoed hi there."
	if content != wantContent {
		t.Errorf("content %q, want %q", content, wantContent)
	}
	if res.Rounds != 2 || res.Answer != "Done: echoed hi there." {
		t.Errorf("rounds %d answer %q", res.Rounds, res.Answer)
	}
	if len(res.ToolCalls) != 1 || string(res.ToolCalls[0].Arguments) != `{"input":"hi there"}` || res.ToolCalls[0].Result != "echoed hi there" {
		t.Errorf("records %+v", res.ToolCalls)
	}
}

// TestToolFailures: a panicking tool, a tool that hangs past its timeout
// and a tool that returns an error all end as error tags, their errors go
// back to the model, and the run goes on.
func TestToolFailures(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{
			toolCall("p", "panics", `{}`),
			toolCall("h", "hangs", `{}`),
			toolCall("e", "fails", `{}`),
			toolCall("l", "leaks", `{}`),
			toolCall("ok", "works", `{}`),
		}},
		{Content: "Some tools failed."},
	}}
	res, _, err := runChecked(t, simplifiedagent.Request{
		Model: m, Input: "go",
		ToolTimeout: 50 * time.Millisecond, CancelGrace: 50 * time.Millisecond,
		Tools: []simplifiedagent.Tool{
			funcTool{"panics", func(context.Context, string) (string, error) { panic("kaboom") }},
			funcTool{"hangs", func(context.Context, string) (string, error) { <-release; return "late", nil }},
			funcTool{"fails", func(context.Context, string) (string, error) { return "", errors.New("no luck") }},
			funcTool{"leaks", func(context.Context, string) (string, error) {
				return "", errors.New("lookup example.com on 10.255.255.53:53: no such host")
			}},
			funcTool{"works", func(context.Context, string) (string, error) { return "fine", nil }},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"p": "tool panicked: kaboom", "h": "timed out after 50ms", "e": "no luck", "ok": "",
		"l": "lookup example.com on an internal address: no such host"}
	for _, r := range res.ToolCalls {
		if w := want[r.ID]; r.Error != w || (w == "") != (r.Status == "success") {
			t.Errorf("call %s: status %s error %q, want error %q", r.ID, r.Status, r.Error, w)
		}
	}
	tools := m.seen[1]
	var results []string
	for _, mc := range tools {
		for _, p := range mc.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				results = append(results, r.ToolCallID+"="+r.Content)
			}
		}
	}
	if got := strings.Join(results, ";"); got != "p=error: tool panicked: kaboom;h=error: timed out after 50ms;e=error: no luck;l=error: lookup example.com on an internal address: no such host;ok=fine" {
		t.Errorf("tool responses %q", got)
	}
}

// TestMaxRounds: the last round is made without tools, so the model must
// answer.
func TestMaxRounds(t *testing.T) {
	var offered []int
	m := &toolCounting{offered: &offered}
	res, _, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "loop", MaxRounds: 3,
		Tools: []simplifiedagent.Tool{funcTool{"noop", func(context.Context, string) (string, error) { return "ok", nil }}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 3 || len(offered) != 3 || offered[2] != 0 || offered[0] != 1 {
		t.Errorf("rounds %d, tools offered per round %v", res.Rounds, offered)
	}
}

// toolCounting calls noop whenever tools are offered.
type toolCounting struct{ offered *[]int }

func (m *toolCounting) GenerateContent(_ context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	*m.offered = append(*m.offered, len(o.Tools))
	if len(o.Tools) == 0 {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "final"}}}, nil
	}
	b, _ := json.Marshal(len(msgs))
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{toolCall("n"+string(b), "noop", "{}")}}}}, nil
}

func (m *toolCounting) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// gets its own id back.
func TestOddModelIDs(t *testing.T) {
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return in, nil }}
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{toolCall("evil\"id\n", "echo", `{}`), toolCall("", "echo", `{}`)}},
		{Content: "ok"},
	}}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "x", Tools: []simplifiedagent.Tool{echo}})
	if err != nil {
		t.Fatal(err)
	}
	content := rec.content(t)
	spans := toolcallmarkup.Scan(content)
	if len(spans) != 2 || spans[0].Call.ID != "call_1" || spans[1].Call.ID != "call_2" {
		t.Fatalf("tags %+v", spans)
	}
	var ids []string
	for _, mc := range m.seen[1] {
		for _, p := range mc.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				ids = append(ids, r.ToolCallID)
			}
		}
	}
	if len(ids) != 2 || ids[0] != "evil\"id\n" || ids[1] != "call_2" {
		t.Errorf("ids sent back %q", ids)
	}
}

// bigArgs streams one call whose input is size bytes, in chunks of chunk
// bytes (40 KiB in 100-byte chunks when zero).
type bigArgs struct{ size, chunk int }

func (m bigArgs) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if msgs[len(msgs)-1].Role == llms.ChatMessageTypeTool {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
	}
	size, chunk := cmp.Or(m.size, 40<<10), cmp.Or(m.chunk, 100)
	args := `{"input":"` + strings.Repeat("a", size) + `"}`
	fn := llmstream.ToolCallDeltaFuncFromContext(ctx)
	_ = fn(ctx, llmstream.ToolCallDelta{ID: "big", Name: "echo"})
	for i := 0; i < len(args); i += chunk {
		if err := fn(ctx, llmstream.ToolCallDelta{Arguments: args[i:min(i+chunk, len(args))]}); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{toolCall("big", "echo", args)}}}}, nil
}

func (m bigArgs) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// TestBigArguments: the events stay linear in the size of the arguments,
// and tool_call_running carries them whole.
func TestBigArguments(t *testing.T) {
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return fmt.Sprint(len(in)), nil }}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: bigArgs{}, Input: "x", Tools: []simplifiedagent.Tool{echo}})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range rec.all() {
		b, _ := json.Marshal(e.Data)
		total += len(b)
	}
	if total > 2<<20 {
		t.Errorf("events take %d bytes for 40 KiB of arguments", total)
	}
	run := rec.ofType(toolmark.EventToolCallRunning)
	if len(run) != 1 || len(run[0].Data.(toolmark.ToolCallData).Arguments["input"].(string)) != 40<<10 {
		t.Errorf("tool_call_running lacks the whole arguments")
	}
	succ := rec.ofType(toolmark.EventToolCallSuccess)
	if len(succ) != 1 || succ[0].Data.(toolmark.ToolCallData).Result != "40960" {
		t.Errorf("the tool got the wrong input: %+v", succ)
	}
}

// TestArgumentsInSmallChunks: 8 KiB of arguments streamed 4 bytes at a time,
// as a model's tokens come, are not sent whole with every fragment (2 000
// deltas of 4 KiB on average, 16 MiB): whole while short, then each time
// they have doubled; the chunks add up to the arguments.
func TestArgumentsInSmallChunks(t *testing.T) {
	const size = 8<<10 - 20
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return fmt.Sprint(len(in)), nil }}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: bigArgs{size: size, chunk: 4}, Input: "x",
		Tools: []simplifiedagent.Tool{echo}})
	if err != nil {
		t.Fatal(err)
	}
	var chunks strings.Builder
	whole, total := 0, 0
	for _, e := range rec.ofType(toolmark.EventToolCallDelta) {
		d := e.Data.(toolmark.ToolCallData)
		chunks.WriteString(d.Chunk)
		if d.Accumulated != "" {
			whole++
			if d.Accumulated != chunks.String() {
				t.Fatalf("accumulated %d bytes, the chunks so far %d", len(d.Accumulated), chunks.Len())
			}
		}
		b, _ := json.Marshal(d)
		total += len(b)
	}
	if want := `{"input":"` + strings.Repeat("a", size) + `"}`; chunks.String() != want {
		t.Fatalf("the chunks add up to %d bytes, want %d", chunks.Len(), len(want))
	}
	t.Logf("%d bytes of arguments: %d deltas, %d of them whole, %d bytes", chunks.Len(), len(rec.ofType(toolmark.EventToolCallDelta)), whole, total)
	if whole > 512/4+8 {
		t.Errorf("%d deltas carry the whole arguments", whole)
	}
	if total > 1<<20 {
		t.Errorf("the deltas take %d bytes for %d bytes of arguments", total, chunks.Len())
	}
}

// logHandler records the callbacks it gets.
type logHandler struct {
	callbacks.SimpleHandler
	mu  sync.Mutex
	log []string
}

func (h *logHandler) add(s string) { h.mu.Lock(); h.log = append(h.log, s); h.mu.Unlock() }
func (h *logHandler) HandleLLMGenerateContentStart(context.Context, []llms.MessageContent) {
	h.add("llm start")
}
func (h *logHandler) HandleLLMGenerateContentEnd(context.Context, *llms.ContentResponse) {
	h.add("llm end")
}
func (h *logHandler) HandleToolStart(ctx context.Context, in string) {
	h.add("tool start " + simplifiedagent.ToolCallIDFromContext(ctx) + " " + in)
}
func (h *logHandler) HandleToolEnd(ctx context.Context, out string) {
	h.add("tool end " + simplifiedagent.ToolCallIDFromContext(ctx) + " " + out)
}

// TestCallbacks: Request.Callbacks sees the model and tool callbacks, with
// the tool-call id in the context.
func TestCallbacks(t *testing.T) {
	echo := funcTool{"echo", func(_ context.Context, in string) (string, error) { return in, nil }}
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{toolCall("c1", "echo", `{"input":"hi"}`)}},
		{Content: "ok"},
	}}
	h := &logHandler{}
	if _, _, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "x", Callbacks: h,
		Tools: []simplifiedagent.Tool{echo}}); err != nil {
		t.Fatal(err)
	}
	want := "llm start|llm end|tool start c1 hi|tool end c1 hi|llm start|llm end"
	if got := strings.Join(h.log, "|"); got != want {
		t.Errorf("callbacks %s, want %s", got, want)
	}
}

// TestStreamedCallsWithoutIDs: a server that streams tool calls without
// ids still gets one tag per call.
func TestStreamedCallsWithoutIDs(t *testing.T) {
	srv := newSSEServer(t, "noid_1.sse", "tool_split_2.sse")
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: mustOpenAI(t, srv.URL), Input: "resume?",
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})}})
	if err != nil {
		t.Fatal(err)
	}
	content := rec.content(t)
	if spans := toolcallmarkup.Scan(content); len(spans) != 1 || spans[0].Call.Status != toolcallmarkup.StatusSuccess {
		t.Errorf("tags %+v, want one success", spans)
	}
	if !strings.Contains(srv.requests()[1], `"tool_call_id":"call_1"`) || !strings.Contains(srv.requests()[1], `"id":"call_1"`) {
		t.Errorf("second request: %s", srv.requests()[1])
	}
}

// stubborn is a model that streams one chunk and then ignores its context.
type stubborn struct{ release chan struct{} }

func (m stubborn) GenerateContent(ctx context.Context, _ []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, f := range opts {
		f(&o)
	}
	_ = o.StreamingFunc(ctx, []byte("thinking <Tool"))
	<-m.release
	_ = o.StreamingFunc(ctx, []byte("late text"))
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "thinking <Toollate text"}}}, nil
}

func (m stubborn) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// TestModelIgnoresCancel: Run returns promptly even when the model does not
// stop, and nothing it does later reaches the events.
func TestModelIgnoresCancel(t *testing.T) {
	m := stubborn{release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder()
	go func() {
		rec.waitFor(context.Background(), func(e toolmark.Draft) bool { return e.Type == toolmark.EventTextDelta })
		cancel()
	}()
	start := time.Now()
	_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: m, Input: "x", CancelGrace: 50 * time.Millisecond}, rec.emit)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
	content := replay(t, rec.all())
	n := len(rec.all())
	close(m.release)
	time.Sleep(20 * time.Millisecond)
	if len(rec.all()) != n || replay(t, rec.all()) != content {
		t.Errorf("events after Run returned, or replay differs: %q", content)
	}
}

type slowTool struct{ funcTool }

func (slowTool) Timeout() time.Duration { return 20 * time.Millisecond }

// TestTimeoutTool: a tool's own Timeout wins over Request.ToolTimeout.
func TestTimeoutTool(t *testing.T) {
	slow := slowTool{funcTool{"slow", func(ctx context.Context, _ string) (string, error) { <-ctx.Done(); return "", ctx.Err() }}}
	m := &scripted{replies: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{toolCall("c", "slow", "{}")}}, {Content: "ok"}}}
	start := time.Now()
	res, _, err := runChecked(t, simplifiedagent.Request{Model: m, Input: "x", ToolTimeout: time.Hour, Tools: []simplifiedagent.Tool{slow}})
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if res.ToolCalls[0].Error != "timed out after 20ms" {
		t.Errorf("error %q", res.ToolCalls[0].Error)
	}
}
