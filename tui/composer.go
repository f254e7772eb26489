package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// maxComposerLines is how tall the composer grows with what is typed.
const maxComposerLines = 6

// composer is the input at the bottom: several lines (Alt+Enter or Ctrl-J
// starts a new one), Home/End and the usual editing keys, pastes taken
// whole. Enter sends; a line starting with / is a command.
type composer struct {
	ta textarea.Model
	// shown is the textarea's last view, kept while nothing changed it: the
	// program asks for the whole screen after every message, most of them
	// a streaming answer's.
	shown string
	fresh bool
}

func newComposer() composer {
	ta := textarea.New()
	ta.Prompt = "› "
	ta.Placeholder = "Ask something — Enter sends, Alt+Enter adds a line, /help lists the commands"
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = maxComposerLines
	ta.SetHeight(1)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"), key.WithHelp("alt+enter", "new line"))
	c := composer{ta: ta}
	c.setDark(true)
	return c
}

// setDark styles the composer for a dark or a light terminal background
// (the line being typed is not highlighted: on a light terminal textarea's
// dark default made it a black bar).
func (c *composer) setDark(dark bool) {
	s := textarea.DefaultStyles(dark)
	s.Focused.CursorLine = lipgloss.NewStyle()
	c.ta.SetStyles(s)
	c.fresh = false
}

func (c *composer) focus() tea.Cmd {
	c.fresh = false
	return c.ta.Focus()
}

func (c *composer) setWidth(w int) {
	c.fresh = false
	c.ta.SetWidth(max(w-2, 10))
}

// height is the composer's height in lines.
func (c *composer) height() int { return max(c.ta.Height(), 1) }

func (c *composer) value() string { return c.ta.Value() }

func (c *composer) empty() bool { return strings.TrimSpace(c.ta.Value()) == "" }

func (c *composer) reset() {
	c.fresh = false
	c.ta.Reset()
}

// set puts text in the composer (a message that could not be sent, a
// question to edit), the cursor at its end.
func (c *composer) set(text string) {
	c.fresh = false
	c.ta.SetValue(text)
	c.ta.MoveToEnd()
}

// update passes a key to the textarea.
func (c *composer) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	c.fresh = false
	c.ta, cmd = c.ta.Update(msg)
	return cmd
}

// paste inserts pasted text as it is.
func (c *composer) paste(p tea.PasteMsg) { _ = c.update(p) }

func (c *composer) view() string {
	if !c.fresh {
		c.shown, c.fresh = c.ta.View(), true
	}
	return c.shown
}

// command is one of the composer's commands.
type command struct {
	name, args, help string
}

// commands are the composer's commands, in the order /help lists them.
var commands = []command{
	{"/help", "", "show this help (also ? on an empty line)"},
	{"/new", "", "start a new conversation"},
	{"/list", "", "list the conversations; Enter opens one"},
	{"/search", "TEXT", "find the conversations that hold TEXT"},
	{"/open", "ID", "open a conversation by its id"},
	{"/retry", "[MODEL]", "answer a failed or stopped question again (by MODEL)"},
	{"/regenerate", "[MODEL]", "write the last answer again (by MODEL)"},
	{"/edit", "[TEXT]", "ask TEXT instead of the last question"},
	{"/version", "N", "show version N of the last question (‹ 2/3 ›)"},
	{"/rename", "TITLE", "rename the conversation"},
	{"/export", "[FILE]", "save as Markdown (FILE.json: as JSON)"},
	{"/tools", "", "list the tools and MCP servers"},
	{"/attach", "PATH", "attach a file to your next message"},
	{"/model", "[ID]", "list the models, or answer with model ID"},
	{"/quit", "", "quit (also Ctrl-C twice on an empty line)"},
}

// knownCommand reports whether name is a command.
func knownCommand(name string) bool {
	for _, c := range commands {
		if c.name == name || name == "/exit" {
			return true
		}
	}
	return false
}

// keysHelp lists the keys, for the help screen.
var keysHelp = [][2]string{
	{"Enter", "send"},
	{"Alt+Enter, Ctrl-J", "new line"},
	{"Ctrl-O", "switch between the live view and the expanded view (every call's parameters and result)"},
	{"Ctrl-C", "cancel the answer being written; twice: quit; on a line being typed: clear it"},
	{"PgUp / PgDn", "scroll; PgUp at the top shows earlier messages"},
	{"↑ / ↓", "scroll when the line is empty"},
	{"Esc", "leave the list, the help or the expanded view"},
}

// helpView is the help screen.
func helpView(width, height int) string {
	var b strings.Builder
	b.WriteString(styleName.Render("Commands") + "\n")
	for _, c := range commands {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		b.WriteString(ansi.Wrap("  "+styleUser.Render(name)+"  "+c.help, width, "") + "\n")
	}
	b.WriteString("\n" + styleName.Render("Keys") + "\n")
	for _, k := range keysHelp {
		b.WriteString(ansi.Wrap("  "+styleUser.Render(k[0])+"  "+k[1], width, "") + "\n")
	}
	b.WriteString("\n" + styleMuted.Render("Esc or Enter goes back."))
	lines := strings.Split(b.String(), "\n")
	if len(lines) > height {
		lines = lines[:height]
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// hints are the key hints of the status line, as many as the width holds.
func hints(width int, m mode, running bool) string {
	switch m {
	case modePicker:
		return "↑/↓ choose · Enter opens · Esc goes back"
	case modeHelp, modeTools:
		return "Esc or Enter goes back"
	}
	stop := "Ctrl-C quit"
	if running {
		stop = "Ctrl-C cancels"
	}
	switch {
	case width >= 100:
		return "Enter sends · Alt+Enter new line · Ctrl-O details · " + stop + " · /list /new /help /quit"
	case width >= 56:
		return "Ctrl-O details · " + stop + " · /list /new /help /quit"
	}
	return "/help · " + stop
}
