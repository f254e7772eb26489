package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Versions of a question: a question asked again (/edit, /regenerate,
// /retry, or the page) shows "‹ 2/3 ›" under it, and /version N makes its
// version N the conversation's, the answers and questions after it with it.

// versionLine is the line under a question asked again: which version it
// is, and how to see the others.
func versionLine(e *entry) string {
	i := indexOf(e.versions, e.msgID)
	if len(e.versions) < 2 || i < 0 {
		return ""
	}
	return fmt.Sprintf("  ‹ %d/%d ›  /version N shows another", i+1, len(e.versions))
}

func indexOf(ids []string, id string) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

// version switches the last question asked again to its version arg.
func (m *model) version(arg string, done func(), cannot func(string) tea.Cmd) tea.Cmd {
	var q *entry
	shown := m.chat.history
	if m.chat.live != nil { // an answer followed to its end, asked again elsewhere
		shown = append(shown[:len(shown):len(shown)], m.chat.live)
	}
	for _, e := range shown {
		if len(e.versions) > 1 {
			q = e
		}
	}
	if q == nil {
		return cannot("No question here was asked again: there is no other version.")
	}
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || n < 1 || n > len(q.versions) {
		return cannot(fmt.Sprintf("Usage: /version N, N from 1 to %d.", len(q.versions)))
	}
	done()
	c, ctx, convID, id := m.c, m.ctx, m.chat.convID, q.versions[n-1]
	return func() tea.Msg {
		if _, err := c.SelectVersion(ctx, id); err != nil {
			return noticeMsg{err: err}
		}
		conv, err := c.GetConversation(ctx, convID)
		return historyMsg{convID: convID, conv: conv, err: err}
	}
}
