package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark"
)

// modelMsg is a model picked with /model ID.
type modelMsg struct {
	id, label string
}

// pickModel lists the server's models (/model) or picks the one the next
// answers come from (/model ID), checked against the server's list. What
// the server says is sanitised.
func (m *model) pickModel(arg string) tea.Cmd {
	if arg != "" {
		return m.withModel(arg, func(mi toolmark.ModelInfo) tea.Msg { return modelMsg{id: mi.ID, label: mi.Label} })
	}
	c, ctx, current := m.c, m.ctx, m.modelID
	return func() tea.Msg {
		ms, def, err := c.Models(ctx)
		if err != nil {
			return noticeMsg{err: err}
		}
		return noticeMsg{text: modelsLine(ms, def, current)}
	}
}

// withModel looks the model id up among the server's models: then makes
// the message for a known one; an unknown one is a notice naming the
// valid ids.
func (m *model) withModel(id string, then func(toolmark.ModelInfo) tea.Msg) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		ms, _, err := c.Models(ctx)
		if err != nil {
			return noticeMsg{err: err}
		}
		mi, ok := ms.Find(id)
		if !ok {
			return noticeMsg{text: unknownModel(id, ms)}
		}
		return then(mi)
	}
}

// unknownModel says there is no model id, and which there are.
func unknownModel(id string, ms toolmark.Models) string {
	if len(ms) == 0 {
		return "There is no model " + SanitizeLine(id) + ": this server offers no choice of model."
	}
	ids := ms.IDs()
	for i := range ids {
		ids[i] = SanitizeLine(ids[i])
	}
	return "There is no model " + SanitizeLine(id) + " — use one of: " + strings.Join(ids, ", ") + "."
}

// modelsLine says which models there are and which answers next.
func modelsLine(ms toolmark.Models, def, current string) string {
	if len(ms) == 0 {
		return "This server offers no choice of model."
	}
	parts := make([]string, len(ms))
	for i, mi := range ms {
		parts[i] = SanitizeLine(mi.ID) + " (" + SanitizeLine(mi.Label) + ")"
		if mi.ID == def {
			parts[i] += " default"
		}
	}
	next := "the conversation's model"
	if current != "" {
		next = SanitizeLine(current)
	}
	return "Models: " + strings.Join(parts, ", ") + ". Next answers: " + next + ". /model ID switches."
}
