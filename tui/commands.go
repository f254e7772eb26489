package tui

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// noticeMsg shows a notice (an action's outcome), or an error.
type noticeMsg struct {
	text string
	err  error
}

// command runs a composer command and clears the composer; one that
// cannot run now clears it too and says why (so it never joins what is
// typed next), but a command misspelt or missing its argument stays, to be
// fixed.
func (m *model) command(name, arg string) tea.Cmd {
	busy := m.chat.running()
	refuse := func(why string) tea.Cmd {
		m.notice = why
		return nil
	}
	if !knownCommand(name) {
		return refuse(fmt.Sprintf("There is no command %s — /help lists them (start with // to send a message beginning with /).", SanitizeLine(name)))
	}
	needsIdle := map[string]bool{"/new": true, "/open": true, "/retry": true, "/regenerate": true, "/edit": true, "/version": true}
	done := func() {
		m.input.reset()
		m.notice = ""
		m.chat.resize(m.width, m.bodyHeight())
	}
	cannot := func(why string) tea.Cmd {
		done()
		m.notice = why
		return nil
	}
	if busy && needsIdle[name] {
		return cannot("An answer is being written: wait for it, or Ctrl-C to cancel it, before " + name + ".")
	}
	needsConv := map[string]bool{"/retry": true, "/regenerate": true, "/edit": true, "/rename": true, "/export": true, "/version": true}
	if needsConv[name] && m.chat.convID == "" {
		return cannot("There is no conversation yet: ask something first.")
	}
	switch name {
	case "/quit", "/exit":
		return tea.Quit
	case "/help":
		done()
		m.mode = modeHelp
	case "/new":
		done()
		m.stream.newTurn()
		m.chat.clearHit()
		m.chat.convID, m.chat.title, m.chat.history, m.chat.live, m.chat.more = "", "", nil, nil, false
		if m.chat.expanded {
			m.chat.toggleExpanded()
		}
		m.notice = "A new conversation starts with your next message."
		m.chat.draw(true)
	case "/list", "/search":
		if name == "/search" && arg == "" {
			return refuse("Usage: /search TEXT")
		}
		done()
		return m.listConversations(arg)
	case "/open":
		if arg == "" {
			return refuse("Usage: /open ID — /list shows the ids.")
		}
		done()
		return m.loadHistory(arg)
	case "/retry", "/regenerate":
		return m.again(name == "/retry", arg, done, cannot)
	case "/edit":
		return m.edit(arg, done, cannot)
	case "/version":
		return m.version(arg, done, cannot)
	case "/rename":
		if arg == "" {
			return refuse("Usage: /rename TITLE")
		}
		done()
		return m.rename(arg)
	case "/export":
		done()
		return m.export(arg)
	case "/tools":
		done()
		return m.listTools()
	case "/model":
		done()
		return m.pickModel(arg)
	case "/attach":
		if arg == "" {
			return refuse("Usage: /attach PATH — the file goes with your next message.")
		}
		done()
		return m.attach(arg)
	}
	return nil
}

// again answers the last question again: a retry (after an answer that did
// not complete) or a regeneration, by the model named modelID ("": the
// conversation's), once the server says it has it (againMsg).
func (m *model) again(retry bool, modelID string, done func(), cannot func(string) tea.Cmd) tea.Cmd {
	last := m.chat.lastTurn()
	if last == nil || last.acc == nil || last.turnID == "" {
		return cannot("There is no answer to write again here.")
	}
	if retry && last.acc.Status() == toolmark.TurnCompleted {
		return cannot("The last answer completed: /regenerate writes it again.")
	}
	done()
	if modelID != "" {
		turnID := last.turnID
		return m.withModel(modelID, func(mi toolmark.ModelInfo) tea.Msg { return againMsg{retry: retry, turnID: turnID, model: mi.ID} })
	}
	return m.replaceAgain(againMsg{retry: retry, turnID: last.turnID})
}

// againMsg is a retry or a regeneration of turn turnID by a model the
// server has (model "": the conversation's).
type againMsg struct {
	retry         bool
	turnID, model string
}

// replaceAgain starts the retry or regeneration a, unless an answer is
// being written or another one is the last by now.
func (m *model) replaceAgain(a againMsg) tea.Cmd {
	last := m.chat.lastTurn()
	if m.chat.running() || last == nil || last.turnID != a.turnID {
		m.notice = "The conversation changed: nothing was written again."
		return nil
	}
	return m.replaceLast(last.user, func(k string) (client.TurnInfo, error) {
		if a.retry {
			return m.c.RetryTurnOn(m.ctx, a.turnID, a.model, k)
		}
		return m.c.RegenerateTurnOn(m.ctx, a.turnID, a.model, k)
	})
}

// edit asks text instead of the last question; without text it puts the
// question in the composer, after "/edit ".
func (m *model) edit(text string, done func(), cannot func(string) tea.Cmd) tea.Cmd {
	last := m.chat.lastTurn()
	if last == nil || last.user == "" {
		return cannot("There is no question to edit here.")
	}
	if text == "" {
		m.input.set("/edit " + last.user)
		m.notice = "Edit the question, then Enter asks it again."
		m.chat.resize(m.width, m.bodyHeight())
		return nil
	}
	done()
	turnID := last.turnID
	return m.replaceLast(text, func(k string) (client.TurnInfo, error) {
		st, err := m.c.GetTurn(m.ctx, turnID)
		if err != nil {
			return client.TurnInfo{}, err
		}
		return m.c.EditMessage(m.ctx, st.Turn.UserMessageID, text, k)
	})
}

// rename sets the conversation's title.
func (m *model) rename(title string) tea.Cmd {
	c, ctx, id := m.c, m.ctx, m.chat.convID
	return func() tea.Msg {
		cv, err := c.RenameConversation(ctx, id, title)
		if err != nil {
			return noticeMsg{err: err}
		}
		return titleMsg{convID: id, title: cv.Title}
	}
}

// titleMsg says the conversation's title changed.
type titleMsg struct{ convID, title string }

// export saves the conversation to file (default: its title, .md).
func (m *model) export(file string) tea.Cmd {
	c, ctx, id := m.c, m.ctx, m.chat.convID
	return func() tea.Msg {
		format := "markdown"
		if strings.EqualFold(filepath.Ext(file), ".json") {
			format = "json"
		}
		b, name, err := c.ExportConversation(ctx, id, format)
		if err != nil {
			return noticeMsg{err: err}
		}
		if file == "" {
			file = cmp.Or(name, "conversation.md") // the server's name, made of the title
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return noticeMsg{err: fmt.Errorf("could not write %s: %w", file, err)}
		}
		return noticeMsg{text: "Saved the conversation to " + file + "."}
	}
}

// listConversations opens the picker on the conversations, or on those a
// search finds.
func (m *model) listConversations(query string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		l, err := c.ListConversationsPage(ctx, query, "", 0)
		return convsMsg{list: l.Conversations, query: query, err: err}
	}
}
