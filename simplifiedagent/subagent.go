package simplifiedagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Subagent is the subagent tool: it runs a nested agent on a sub-task with
// its own tools. Inside Run, the nested calls' tags nest in the subagent's
// tag (their ParentID is its toolCallId), subagent_status events report its
// phases (started, round, completed, failed), and its text is not shown:
// its final answer is the tool result. A call may name the item of the
// task list (todo_list) it carries out, its step: the item is ticked done
// when the sub-agent ends well, so a list of parallel sub-agents ticks as
// each finishes rather than when the model next speaks.
type Subagent struct {
	Model       llms.Model
	Tools       []Tool
	System      string
	MaxRounds   int           // default 4
	ToolTimeout time.Duration // for the sub-agent's tools; default DefaultToolTimeout
	// TotalTimeout bounds the whole sub-agent call; default 5 minutes.
	TotalTimeout time.Duration
}

// Timeout implements TimeoutTool: a sub-agent gets TotalTimeout, not the
// run's ToolTimeout.
func (a *Subagent) Timeout() time.Duration {
	if a.TotalTimeout > 0 {
		return a.TotalTimeout
	}
	return 5 * time.Minute
}

// NewSubagent returns the subagent tool running model with tools.
func NewSubagent(model llms.Model, tools ...Tool) *Subagent {
	return &Subagent{Model: model, Tools: tools, MaxRounds: 4,
		System: "You are a research sub-agent. Use the tools to answer the task and reply with a short, factual summary that cites its sources."}
}

// Name implements tools.Tool.
func (*Subagent) Name() string { return "subagent" }

// Description implements tools.Tool.
func (*Subagent) Description() string {
	return "Delegate a self-contained research sub-task to a sub-agent with its own search tools. Returns its findings."
}

// Parameters returns the JSON schema of the arguments.
func (*Subagent) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"task": map[string]any{"type": "string", "description": "the sub-task, self-contained"},
			"step": map[string]any{"type": "string",
				"description": "optional: the text of the todo_list item this sub-task carries out; it is marked done when the sub-agent finishes"},
		},
		"required": []string{"task"},
	}
}

// TagAttrs shows the task on the tag.
func (*Subagent) TagAttrs(args map[string]any) []toolcallmarkup.Attr {
	if t, _ := args["task"].(string); t != "" {
		return []toolcallmarkup.Attr{{Key: "task", Value: t}}
	}
	return nil
}

// Call implements tools.Tool.
func (a *Subagent) Call(ctx context.Context, input string) (string, error) {
	var args struct {
		Task string `json:"task"`
		Step string `json:"step"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		args.Task = input // a plain-text task
	}
	args.Task = strings.TrimSpace(args.Task)
	if args.Task == "" {
		return "", errors.New("subagent: task is empty")
	}
	if a.Model == nil {
		return "", errors.New("subagent: no model")
	}
	req := Request{Model: a.Model, Input: args.Task, Tools: a.Tools, System: a.System,
		MaxRounds: a.MaxRounds, ToolTimeout: a.ToolTimeout}
	if req.MaxRounds <= 0 {
		req.MaxRounds = 4
	}
	ci := callFromContext(ctx)
	if ci == nil {
		res, err := Run(ctx, req, nil)
		if err != nil {
			return "", fmt.Errorf("subagent: %w", err)
		}
		return res.Answer, nil
	}
	req.CancelGrace, req.Retry, req.Logger = ci.l.req.CancelGrace, ci.l.req.Retry, ci.l.req.Logger
	ci.s.subagentStatus(ci.c.id, "started", args.Task)
	l := newLoop(ci.s, req, ci.c.id, false)
	answer, _, err := l.run(ctx)
	if err != nil {
		// People see a short sentence (a model error's, say); the log and
		// the error's chain keep the whole cause.
		msg := tools.UserMessage(err)
		ci.s.subagentStatus(ci.c.id, "failed", msg)
		ci.l.log().Warn("sub-agent failed", "tool_call", ci.c.id, "err", err)
		return "", &tools.Error{Msg: msg, Err: err}
	}
	ci.s.subagentStatus(ci.c.id, "completed", "")
	ci.s.tickTodo(ci.c.id, args.Step)
	if strings.TrimSpace(answer) == "" {
		answer = "(the sub-agent gave no answer)"
	}
	return answer, nil
}
