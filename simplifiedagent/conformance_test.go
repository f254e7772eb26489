package simplifiedagent_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the conformance table in docs/agent.md")

// conformance is one scenario of the provider conformance suite: the
// script of replies a provider gives, and what the turn must come to.
type conformance struct {
	name   string
	doc    string // what the scenario is, for the table
	script func(d fp.Dialect) []fp.Reply
	// sub, when set, is the script of a sub-agent's own model service.
	sub     []fp.Reply
	wantErr string // the code the run must fail with; "" for success
	// wantText is the answer text the content must show, once; wantCalls
	// the final statuses of the tags, in order; retries the model_retry
	// events expected.
	wantText  string
	wantCalls []toolcallmarkup.Status
	retries   int
	usage     *toolmark.Usage
	// callsBy overrides wantCalls for a dialect, errBy wantErr.
	callsBy map[fp.Dialect][]toolcallmarkup.Status
	errBy   map[fp.Dialect]string
	// na names the dialects whose wire has no such case, and why.
	na map[fp.Dialect]string
}

// whole is why the legacy Ollama has no in-stream case: it answers a
// request with tools in one piece.
var whole = map[fp.Dialect]string{fp.OllamaLegacy: "answers a request with tools in one JSON piece: nothing streams"}

func search(id string, args ...string) fp.Call {
	return fp.Call{ID: id, Name: "search_documents", Args: args}
}

// answer is the second round's reply: text after the tools.
var answer = fp.Reply{Text: []string{"Clients resume ", "with Last-Event-ID [1]."}, Input: 200, Output: 12}

const answerText = "Clients resume with Last-Event-ID [1]."

var conformanceScenarios = []conformance{
	{name: "text only", doc: "a streamed answer, no tools",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Hel", "lo, wö", "rld."}, Input: 10, Output: 4}}
		}, wantText: "Hello, wörld.", usage: &toolmark.Usage{InputTokens: 10, OutputTokens: 4}},
	{name: "text then one tool", doc: "text, then a tool call in the same reply (Claude's usual turn)",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"I'll search ", "the docs."}, Calls: []fp.Call{search("toolu_01A", `{"query":`, ` "resume"}`)}, Input: 100, Output: 20}, answer}
		}, wantText: "I'll search the docs. " + answerText, wantCalls: ok(1), usage: &toolmark.Usage{InputTokens: 300, OutputTokens: 32}},
	{name: "text then two parallel tools", doc: "text, then two calls in one reply (interleaved where the wire allows)",
		script: func(d fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Two searches."}, Interleave: true, Calls: []fp.Call{
				search("call_p1", `{"query":`, ` "resume"}`), search("call_p2", `{"query":`, ` "cancellation"}`)}}, answer}
		}, wantText: "Two searches. " + answerText, wantCalls: ok(2)},
	{name: "tools only", doc: "a reply with a call and no text",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Calls: []fp.Call{search("call_t1", `{"query": "resume"}`)}}, answer}
		}, wantText: answerText, wantCalls: ok(1)},
	{name: "arguments split mid-token and mid-UTF-8", doc: "argument chunks cut inside a key and a word; the body flushed inside a character",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{SplitRune: true, Text: []string{"Résumé: "}, Calls: []fp.Call{search("call_s1", `{"que`, `ry": "ré`, `sumé aprè`, `s crash"}`)}}, answer}
		}, wantText: "Résumé: " + answerText, wantCalls: ok(1)},
	{name: "whole calls in one chunk", doc: "each call's id, name and arguments in a single chunk",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Whole: true, Calls: []fp.Call{search("call_w1", `{"query": "resume"}`), search("call_w2", `{"query": "crash"}`)}}, answer}
		}, wantText: answerText, wantCalls: ok(2)},
	{name: "usage in the last chunk", doc: "tokens reported after the answer (usage-only chunk, finish chunk, message_delta)",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Calls: []fp.Call{search("call_u1", `{"query": "resume"}`)}, Input: 1234, Output: 56}, answer}
		}, wantText: answerText, wantCalls: ok(1), usage: &toolmark.Usage{InputTokens: 1434, OutputTokens: 68}},
	{name: "429, 529 and 500, then success", doc: "rate limited, overloaded and failing before streaming; retried, then answered",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Status: 429, RetryAfter: "0"}, {Status: 529}, {Status: 500}, {Text: []string{"Done."}}}
		}, wantText: "Done.", retries: 3},
	{name: "429 until the attempts run out", doc: "rate limited on every attempt: the turn fails with rate_limited",
		script:  func(fp.Dialect) []fp.Reply { return []fp.Reply{{Status: 429, RetryAfter: "0"}} },
		wantErr: toolmark.ERATELIMITED, retries: 3},
	{name: "overloaded in the stream before any token", doc: "an overloaded error event before the answer: retried",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{StreamErr: "overloaded", ErrFirst: true}, {Text: []string{"Back."}}}
		}, wantText: "Back.", retries: 1},
	{name: "overloaded in the stream after tokens", doc: "an overloaded error event mid-answer: not retried (nothing is shown twice)",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Half an ans"}, StreamErr: "overloaded"}, {Text: []string{"must not be asked for"}}}
		}, wantErr: toolmark.EOVERLOADED, wantText: "Half an ans", na: whole},
	{name: "cut mid-arguments", doc: "the body ends inside a call's arguments: the tag ends in error",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Searching."}, Cut: true, Calls: []fp.Call{search("call_c1", `{"query": "res`, `ume after crash"}`)}}}
		}, wantErr: toolmark.ESTREAMCUT, wantText: "Searching.", wantCalls: []toolcallmarkup.Status{toolcallmarkup.StatusError}, na: whole,
		callsBy: map[fp.Dialect][]toolcallmarkup.Status{fp.Ollama: nil}}, // the cut falls inside the call's one chunk: no tag began
	{name: "EOF without the end marker", doc: "a complete answer whose stream ends without [DONE] / message_stop",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Complete ", "answer."}, NoDone: true}}
		}, wantText: "Complete answer."},
	{name: "malformed chunk", doc: "a chunk that is not JSON after some text: the turn fails, bad_response",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Start."}, Malformed: true}}
		}, wantErr: toolmark.EBADRESPONSE, wantText: "Start.", na: whole},
	{name: "unknown tool", doc: "a call of a tool that does not exist: its tag ends in error, the turn goes on",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Calls: []fp.Call{{ID: "call_x1", Name: "delete_everything", Args: []string{`{}`}}}}, answer}
		}, wantText: answerText, wantCalls: []toolcallmarkup.Status{toolcallmarkup.StatusError}},
	{name: "invalid-JSON arguments", doc: "arguments that do not parse: the tag ends in error, {} goes back",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Calls: []fp.Call{search("call_j1", `{"query": "unterminated`)}}, answer}
		}, wantText: answerText, wantCalls: []toolcallmarkup.Status{toolcallmarkup.StatusError}},
	{name: "sub-agent whose model fails", doc: "a sub-agent's model service fails for good: its tag says so in a sentence",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Calls: []fp.Call{{ID: "call_sa1", Name: "subagent", Args: []string{`{"task": "research resume"}`}}}}, answer}
		},
		sub:      []fp.Reply{{Status: 500}},
		wantText: answerText, wantCalls: []toolcallmarkup.Status{toolcallmarkup.StatusError}, retries: 3},
}

func init() { conformanceScenarios = append(conformanceScenarios, stopScenarios...) }

// stopScenarios are the replies that stop short, the errors that are not
// the service's unavailability, and thinking that only some wires have.
var stopScenarios = []conformance{
	{name: "500 until the attempts run out", doc: "the service fails on every attempt: service_failed",
		script:  func(fp.Dialect) []fp.Reply { return []fp.Reply{{Status: 500}} },
		wantErr: toolmark.ESERVICEFAILED, retries: 3},
	{name: "server error in the stream after tokens", doc: "server_error / api_error mid-answer: service_failed, the text kept",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Half an ans"}, StreamErr: "server"}}
		}, wantErr: toolmark.ESERVICEFAILED, wantText: "Half an ans", na: whole},
	{name: "malformed chunk before any token", doc: "an answer that cannot be read, before anything streamed: bad_response, not retried",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{""}, Malformed: true}, {Text: []string{"must not be asked for"}}}
		}, wantErr: toolmark.EBADRESPONSE, na: whole},
	{name: "quota or credit used up", doc: "insufficient_quota (429) / a low credit balance (400): not retried",
		script:  func(d fp.Dialect) []fp.Reply { return []fp.Reply{{Status: quotaStatus(d), Error: "quota"}} },
		wantErr: toolmark.EQUOTA, errBy: map[fp.Dialect]string{fp.Anthropic: toolmark.ECREDIT, fp.AnthropicThinking: toolmark.ECREDIT}},
	{name: "answer cut at the token limit", doc: "finish_reason length / stop_reason max_tokens: token_limit, the text kept",
		script: func(d fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"The answer was going to"}, Stop: lengthStop(d)}}
		}, wantErr: toolmark.ETOKENLIMIT, wantText: "The answer was going to"},
	{name: "call cut at the token limit", doc: "the limit falls inside a call's arguments: the call is not run, token_limit",
		script: func(d fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Searching."}, Calls: []fp.Call{search("call_l1", `{"query": "res`)}, Stop: lengthStop(d)}}
		}, wantErr: toolmark.ETOKENLIMIT, wantText: "Searching.", wantCalls: []toolcallmarkup.Status{toolcallmarkup.StatusError}},
	{name: "filtered", doc: "finish_reason content_filter (Azure, OpenAI): filtered, the text kept",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Here is how"}, Stop: "content_filter"}}
		}, wantErr: toolmark.EFILTERED, wantText: "Here is how", na: notOn("no content_filter stop", fp.Anthropic, fp.AnthropicThinking)},
	{name: "refused", doc: "stop_reason refusal (Anthropic): refused",
		script:  func(fp.Dialect) []fp.Reply { return []fp.Reply{{Stop: "refusal"}} },
		wantErr: toolmark.EREFUSED, na: onlyOn("no refusal stop", fp.Anthropic, fp.AnthropicThinking)},
	{name: "pause_turn", doc: "stop_reason pause_turn (Anthropic): the reply goes back as it is and the turn goes on",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Text: []string{"Part one."}, Stop: "pause_turn"}, {Text: []string{" Part two."}}}
		}, wantText: "Part one. Part two.", na: onlyOn("no pause_turn", fp.Anthropic, fp.AnthropicThinking)},
	{name: "redacted thinking", doc: "a thinking and a redacted_thinking block before the call go back unchanged, in order",
		script: func(fp.Dialect) []fp.Reply {
			return []fp.Reply{{Redacted: true, Calls: []fp.Call{search("toolu_r1", `{"query": "resume"}`)}}, answer}
		}, wantText: answerText, wantCalls: ok(1), na: onlyOn("no redacted_thinking", fp.AnthropicThinking)},
}

func lengthStop(d fp.Dialect) string {
	if d.Anthropic() {
		return "max_tokens"
	}
	return "length"
}

func quotaStatus(d fp.Dialect) int {
	if d.Anthropic() {
		return 400
	}
	return 429
}

// notOn marks the dialects whose wire has no such case; onlyOn all others.
func notOn(why string, ds ...fp.Dialect) map[fp.Dialect]string {
	m := map[fp.Dialect]string{}
	for _, d := range ds {
		m[d] = why
	}
	return m
}

func onlyOn(why string, ds ...fp.Dialect) map[fp.Dialect]string {
	m := map[fp.Dialect]string{}
	for _, d := range fp.Dialects {
		if !slices.Contains(ds, d) {
			m[d] = why
		}
	}
	return m
}

func ok(n int) []toolcallmarkup.Status {
	s := make([]toolcallmarkup.Status, n)
	for i := range s {
		s[i] = toolcallmarkup.StatusSuccess
	}
	return s
}

// TestProviderConformance runs every scenario against every provider's wire
// format, served by a local service that validates each request as the
// real API would, and writes (or, with -update-docs, rewrites) the table
// of results in docs/agent.md.
func TestProviderConformance(t *testing.T) {
	var mu sync.Mutex
	results := map[string]map[fp.Dialect]bool{}
	for _, sc := range conformanceScenarios {
		results[sc.name] = map[fp.Dialect]bool{}
		for _, d := range fp.Dialects {
			if _, skip := sc.na[d]; skip {
				continue
			}
			t.Run(sc.name+"/"+string(d), func(t *testing.T) {
				t.Parallel()
				runConformance(t, sc, d)
				mu.Lock()
				results[sc.name][d] = !t.Failed()
				mu.Unlock()
			})
		}
	}
	t.Cleanup(func() { checkConformanceTable(t, results) })
}

// retryFast keeps the suite quick: the waits are the only thing changed.
var retryFast = simplifiedagent.RetryPolicy{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxTotal: 5 * time.Second}

func runConformance(t *testing.T, sc conformance, d fp.Dialect) {
	srv := fp.Start(t, d, sc.script(d)...)
	search := tools.NewSearchDocuments(&fakeSearcher{docs: testDocs})
	toolset := []simplifiedagent.Tool{search}
	var subSrv *fp.Server
	if sc.sub != nil {
		subSrv = fp.Start(t, d, sc.sub...)
		toolset = append(toolset, simplifiedagent.NewSubagent(subSrv.Model(t), search))
	}
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "How does resume work?",
		Tools: toolset, System: "Answer from the docs.", Retry: retryFast, Logger: discardLogger()}, rec.emit)
	events := rec.all()
	checkToolOrder(t, events)
	content := replay(t, events)
	checkAllFinal(t, content)

	if p := append(srv.Problems(), problemsOf(subSrv)...); len(p) > 0 {
		t.Errorf("the service refused what toolmark sent: %v", p)
	}
	wantErr := sc.wantErr
	if w, ok := sc.errBy[d]; ok {
		wantErr = w
	}
	if got := toolmark.ErrorCode(err); wantErr == "" && err != nil || wantErr != "" && got != wantErr {
		t.Errorf("error %v (code %q), want code %q", err, got, wantErr)
	}
	checkThinking(t, d, content, rec.ofType(toolmark.EventReasoningDelta))
	if got := toolcallmarkup.RestoreText(visibleOf(content)); got != strings.Join(strings.Fields(sc.wantText), " ") {
		t.Errorf("answer text %q, want %q (once)", got, sc.wantText)
	}
	var statuses []toolcallmarkup.Status
	for _, sp := range toolcallmarkup.Scan(content) {
		if sp.Call.ParentID == "" {
			statuses = append(statuses, sp.Call.Status)
		}
	}
	want := sc.wantCalls
	if w, ok := sc.callsBy[d]; ok {
		want = w
	}
	if fmt.Sprint(statuses) != fmt.Sprint(want) && !(len(statuses) == 0 && len(want) == 0) {
		t.Errorf("tags %v, want %v\ncontent: %s", statuses, want, content)
	}
	if got := len(rec.ofType(toolmark.EventModelRetry)); got != sc.retries {
		t.Errorf("%d model_retry events, want %d", got, sc.retries)
	}
	if sc.usage != nil {
		var last toolmark.UsageData
		for _, e := range rec.ofType(toolmark.EventUsage) {
			last = e.Data.(toolmark.UsageData)
		}
		if last.Total != *sc.usage {
			t.Errorf("usage %+v, want %+v", last.Total, *sc.usage)
		}
	}
	for _, s := range userVisible(err, events) {
		if bad := leak(s, srv, subSrv); bad != "" {
			t.Errorf("a user-visible text %s: %q", bad, s)
		}
	}
}

func problemsOf(s *fp.Server) []string {
	if s == nil {
		return nil
	}
	return s.Problems()
}

// visibleOf is the content without its tags' elements.
func visibleOf(content string) string {
	var b strings.Builder
	last := 0
	for _, sp := range toolcallmarkup.Scan(content) {
		if sp.Start < last {
			continue // nested
		}
		b.WriteString(content[last:sp.Start])
		last = sp.End
	}
	b.WriteString(content[last:])
	return strings.Join(strings.Fields(b.String()), " ")
}

// userVisible collects every text of a run that reaches people: the run's
// error as toolmark shows it, tool errors and the tags' error attributes,
// sub-agent status messages and retry messages.
func userVisible(err error, events []toolmark.Draft) []string {
	var out []string
	if err != nil {
		out = append(out, toolmark.ErrorMessage(err))
	}
	for _, e := range events {
		switch d := e.Data.(type) {
		case toolmark.ToolCallData:
			out = append(out, d.Error, d.Markup, d.StatusText)
		case toolmark.SubagentStatusData:
			out = append(out, d.Message)
		case toolmark.ModelRetryData:
			out = append(out, d.Message)
		}
	}
	return out
}

var (
	urlRE  = regexp.MustCompile(`(?i)https?://|\blocalhost\b|\b\d{1,3}(\.\d{1,3}){3}\b|:\d{2,5}\b`)
	dumpRE = regexp.MustCompile(`map\[|%!|&\{|\*[a-z]+\.[A-Z]\w*|\b[a-z]+\.[A-Z]\w*\{|\bgoroutine\b`)
)

// leak says what a user-visible text gives away that it must not: a URL,
// a host or port, a Go type or a map dump; "" when it is clean.
func leak(s string, servers ...*fp.Server) string {
	for _, srv := range servers {
		if srv != nil && strings.Contains(s, srv.Host()) {
			return "names the service's address"
		}
	}
	switch {
	case urlRE.MatchString(s):
		return "names a URL, host or port"
	case dumpRE.MatchString(s):
		return "holds a Go type or a map dump"
	}
	return ""
}

// checkConformanceTable compares docs/agent.md's table with the results,
// or rewrites it with -update-docs.
func checkConformanceTable(t *testing.T, results map[string]map[fp.Dialect]bool) {
	var b strings.Builder
	b.WriteString("| scenario |")
	for _, d := range fp.Dialects {
		b.WriteString(" " + string(d) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(fp.Dialects)) + "\n")
	for _, sc := range conformanceScenarios {
		fmt.Fprintf(&b, "| %s — %s |", sc.name, sc.doc)
		for _, d := range fp.Dialects {
			cell := "FAIL"
			if why, skip := sc.na[d]; skip {
				cell = "n/a: " + why
			} else if results[sc.name][d] {
				cell = "pass"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	const path, begin, end = "../docs/agent.md", "<!-- conformance table: begin -->\n", "<!-- conformance table: end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no conformance table markers", path)
	}
	table := b.String()
	if *updateDocs {
		out := string(doc[:i+len(begin)]) + table + string(doc[j:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(doc[i+len(begin) : j]); got != table {
		t.Errorf("the conformance table of %s is not what the suite measured (run go test -run TestProviderConformance -update-docs ./simplifiedagent/):\n%s", path, table)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// checkThinking checks the reasoning_delta events of a run: none of the
// thinking reaches the content, every round that thought ends with a Done
// one, and a dialect that streams thinking shows it.
func checkThinking(t *testing.T, d fp.Dialect, content string, events []toolmark.Draft) {
	t.Helper()
	open := map[int]bool{}
	var text strings.Builder
	for _, e := range events {
		r := e.Data.(toolmark.ReasoningDeltaData)
		text.WriteString(r.Text)
		open[r.Round] = !r.Done
	}
	for round, o := range open {
		if o {
			t.Errorf("round %d's thinking never ended (no reasoning_delta with done)", round)
		}
	}
	if d.StreamsThinking() && len(events) > 0 && !strings.Contains(text.String(), "search first") {
		t.Errorf("thinking %q, want the model's", text.String())
	}
	if strings.Contains(content, "search first") {
		t.Errorf("thinking reached the content: %q", content)
	}
}
