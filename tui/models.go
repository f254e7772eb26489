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
	c, ctx, current := m.c, m.ctx, m.modelID
	return func() tea.Msg {
		ms, def, err := c.Models(ctx)
		if err != nil {
			return noticeMsg{err: err}
		}
		if arg == "" {
			return noticeMsg{text: modelsLine(ms, def, current)}
		}
		mi, ok := ms.Find(arg)
		if !ok {
			return noticeMsg{text: "There is no model " + SanitizeLine(arg) + " — /model lists them."}
		}
		return modelMsg{id: mi.ID, label: mi.Label}
	}
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
