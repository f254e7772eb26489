package mcptools_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
	"github.com/toolmark/toolmark/turnstate"
)

// turn is what a demo turn over a manager's tools produced.
type turn struct {
	mu     sync.Mutex
	events []toolmark.Draft
	state  *turnstate.State
	res    simplifiedagent.Result
	err    error
}

func (tr *turn) emit(_ context.Context, e toolmark.Draft) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.events = append(tr.events, e)
	return tr.state.Apply(e, time.Now())
}

// ofType returns the events of type typ so far.
func (tr *turn) ofType(typ toolmark.EventType) []toolmark.Draft {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []toolmark.Draft
	for _, e := range tr.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// calls returns the final tool_call_* event of each call, in order.
func (tr *turn) finals() []toolmark.ToolCallData {
	var out []toolmark.ToolCallData
	for _, e := range tr.events {
		if e.Type == toolmark.EventToolCallSuccess || e.Type == toolmark.EventToolCallError {
			out = append(out, e.Data.(toolmark.ToolCallData))
		}
	}
	return out
}

// runTurn asks the offline demo model question with m's tools.
func runTurn(ctx context.Context, t *testing.T, m *mcptools.Manager, question string) *turn {
	t.Helper()
	tr, done := startTurn(ctx, m, question)
	<-done
	return tr
}

// startTurn is runTurn in the background: done is closed when it ended.
func startTurn(ctx context.Context, m *mcptools.Manager, question string) (*turn, <-chan struct{}) {
	return startTurnWith(ctx, m.AgentTools(), question)
}

// startTurnWith is startTurn with the tools given.
func startTurnWith(ctx context.Context, tools []simplifiedagent.Tool, question string) (*turn, <-chan struct{}) {
	tr := &turn{state: turnstate.New()}
	// The runner's turn_started, which Run does not send.
	_ = tr.state.Apply(toolmark.Draft{Type: toolmark.EventTurnStarted, Data: toolmark.TurnStartedData{}}, time.Now())
	model := demo.New()
	model.Delay = 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.res, tr.err = simplifiedagent.Run(ctx, simplifiedagent.Request{Model: model, Input: question,
			Tools: tools}, tr.emit)
	}()
	return tr, done
}

// bubble returns the turn's status bubble as it now stands.
func (tr *turn) bubble() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.Bubble()
}

// mustStart starts a manager of cfg and waits until its servers connected
// or failed.
func mustStart(t *testing.T, cfg *mcptools.Config) *mcptools.Manager {
	t.Helper()
	m := mcptools.New(cfg, mcptools.Options{MinBackoff: 200 * time.Millisecond, MaxBackoff: time.Second})
	m.Start(context.Background())
	t.Cleanup(func() { _ = m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// mustParse parses a config file's text.
func mustParse(t *testing.T, text string, env map[string]string) *mcptools.Config {
	t.Helper()
	cfg, err := mcptools.Parse([]byte(text), "mcp.json", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func hasTool(m *mcptools.Manager, name string) bool {
	for _, tl := range m.Tools() {
		if tl.Name() == name {
			return true
		}
	}
	return false
}
