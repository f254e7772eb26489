package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// key handles a key press.
func (m *model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	s := k.String()
	if s != "ctrl+c" {
		m.quitArmed = time.Time{}
	}
	switch s {
	case "ctrl+c":
		return m, m.interrupt()
	case "esc":
		switch {
		case m.mode != modeChat:
			m.mode = modeChat
		case m.chat.expanded:
			m.chat.toggleExpanded()
		}
		m.notice = ""
		return m, nil
	case "ctrl+o":
		if m.mode == modeChat {
			m.chat.toggleExpanded()
		}
		return m, nil
	case "pgup":
		return m, m.pageUp()
	case "pgdown":
		m.chat.vp.pageDown()
		return m, nil
	}
	switch m.mode {
	case modePicker:
		return m, m.pickerKey(s)
	case modeHelp, modeTools:
		if s == "enter" || s == "q" {
			m.mode = modeChat
		}
		return m, nil
	}
	switch {
	case s == "enter":
		return m, m.submit()
	case s == "?" && m.input.empty():
		m.mode = modeHelp
		return m, nil
	case (s == "up" || s == "down") && m.input.empty():
		if s == "up" {
			m.chat.vp.scroll(-1)
		} else {
			m.chat.vp.scroll(1)
		}
		return m, nil
	}
	cmd := m.input.update(k)
	m.chat.resize(m.width, m.bodyHeight())
	return m, cmd
}

// pageUp scrolls up, and at the top asks for earlier messages.
func (m *model) pageUp() tea.Cmd {
	if m.mode != modeChat {
		return nil
	}
	if m.chat.vp.atTop() && m.chat.more && !m.chat.expanded {
		return m.loadOlder()
	}
	m.chat.vp.pageUp()
	return nil
}

// pickerKey handles a key in the list of conversations.
func (m *model) pickerKey(s string) tea.Cmd {
	switch s {
	case "up", "k":
		m.picker.move(-1)
	case "down", "j":
		m.picker.move(1)
	case "enter":
		cv, ok := m.picker.selected()
		m.mode = modeChat
		if !ok {
			return nil
		}
		if m.chat.running() {
			m.notice = "An answer is being written here: wait for it, or Ctrl-C to cancel it."
			return nil
		}
		if m.picker.query != "" && cv.HitMessageID != "" {
			return m.openHit(cv.ID, hitAt{msgID: cv.HitMessageID, query: m.picker.query})
		}
		return m.loadHistory(cv.ID)
	}
	return nil
}

// interrupt is Ctrl-C: it cancels the answer being written (a second one
// quits), clears a line being typed, and on an idle, empty prompt asks to
// press it again before quitting.
func (m *model) interrupt() tea.Cmd {
	if live := m.chat.live; live != nil && live.running {
		if live.cancelling {
			return m.quit()
		}
		live.cancelling = true
		m.cancelled = time.Now()
		m.notice = "Cancelling the answer… (Ctrl-C again to quit)"
		m.chat.redraw()
		return m.cancel(live.turnID)
	}
	if m.mode != modeChat {
		m.mode = modeChat
		return nil
	}
	if !m.input.empty() {
		m.input.reset()
		m.chat.resize(m.width, m.bodyHeight())
		return nil
	}
	if time.Since(m.cancelled) < doublePress {
		return m.quit() // the second press of a double Ctrl-C the answer's end overtook
	}
	if !m.quitArmed.IsZero() && time.Since(m.quitArmed) < quitWindow {
		return m.quit()
	}
	m.quitArmed = time.Now()
	m.notice = "Press Ctrl-C again to quit (or type /quit)."
	return tea.Tick(quitWindow, func(time.Time) tea.Msg { return quitExpiredMsg{} })
}

// quitExpiredMsg ends the window in which a second Ctrl-C quits.
type quitExpiredMsg struct{}

// quit quits, once the cancel requests in flight are sent.
func (m *model) quit() tea.Cmd {
	if m.pending > 0 {
		m.quitting = true
		m.notice = "Quitting once the cancel reaches the server…"
		return nil
	}
	return tea.Quit
}

// submit acts on the composer: a command or a message.
func (m *model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.value())
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		name, arg, _ := strings.Cut(text, " ")
		return m.command(name, strings.TrimSpace(arg))
	}
	if m.chat.running() {
		m.notice = "An answer is being written: wait for it, or Ctrl-C to cancel it."
		return nil
	}
	m.input.reset()
	m.chat.resize(m.width, m.bodyHeight())
	return m.send(strings.TrimPrefix(text, "/")) // "//x" sends "/x"
}
