package simplifiedagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolmark/toolmark"
)

// TodoList is the todo_list tool: the model sends its whole task list each
// time. Run reports the list as a todo_update event (a todo_list call has
// no tag and no tool_call_* events) and returns the last one in
// Result.Todos.
type TodoList struct{}

// NewTodoList returns the todo_list tool.
func NewTodoList() *TodoList { return &TodoList{} }

func (*TodoList) untagged() {}

// MaxTodos bounds the items of a todo list.
const MaxTodos = 50

// Name implements tools.Tool.
func (*TodoList) Name() string { return "todo_list" }

// Description implements tools.Tool.
func (*TodoList) Description() string {
	return "Keep a task list for a question with several parts. Send the whole list each time, " +
		"with each item's status: pending, in_progress or done."
}

// Parameters returns the JSON schema of the arguments.
func (*TodoList) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"todos": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"text":   map[string]any{"type": "string"},
						"status": map[string]any{"type": "string", "enum": []string{"pending", "in_progress", "done"}},
					},
					"required": []string{"text", "status"},
				},
			},
		},
		"required": []string{"todos"},
	}
}

// ParseTodos decodes todo_list arguments, accepting common spellings of
// the statuses (completed, in-progress, …).
func ParseTodos(input string) ([]toolmark.Todo, error) {
	var args struct {
		Todos []struct {
			Text    string `json:"text"`
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	}
	if err := json.Unmarshal([]byte(input), &args); err != nil {
		return nil, fmt.Errorf("todo_list: bad arguments: %w", err)
	}
	if len(args.Todos) > MaxTodos {
		return nil, fmt.Errorf("todo_list: more than %d items", MaxTodos)
	}
	todos := make([]toolmark.Todo, 0, len(args.Todos))
	for _, t := range args.Todos {
		text := strings.TrimSpace(t.Text)
		if text == "" {
			text = strings.TrimSpace(t.Content)
		}
		if text == "" {
			return nil, errors.New("todo_list: an item has no text")
		}
		var st toolmark.TodoStatus
		switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(t.Status), "-", "_")) {
		case "", "pending", "todo", "open":
			st = toolmark.TodoPending
		case "in_progress", "active", "doing", "running":
			st = toolmark.TodoInProgress
		case "done", "completed", "complete", "finished":
			st = toolmark.TodoDone
		default:
			return nil, fmt.Errorf("todo_list: unknown status %q", t.Status)
		}
		todos = append(todos, toolmark.Todo{Text: text, Status: st})
	}
	return todos, nil
}

// Call implements tools.Tool.
func (*TodoList) Call(ctx context.Context, input string) (string, error) {
	todos, err := ParseTodos(input)
	if err != nil {
		return "", err
	}
	if ci := callFromContext(ctx); ci != nil {
		ci.s.setTodos(ci.c.id, todos)
	}
	n := map[toolmark.TodoStatus]int{}
	for _, t := range todos {
		n[t.Status]++
	}
	return fmt.Sprintf("Todo list updated: %d done, %d in progress, %d pending.",
		n[toolmark.TodoDone], n[toolmark.TodoInProgress], n[toolmark.TodoPending]), nil
}
