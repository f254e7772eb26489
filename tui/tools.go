package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark/client"
)

// toolsMsg carries GET /api/tools for the /tools screen.
type toolsMsg struct {
	tools client.Tools
	err   error
}

// listTools reads the tools the agent offers.
func (m *model) listTools() tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		t, err := c.ListTools(ctx)
		return toolsMsg{tools: t, err: err}
	}
}

// toolsView is the /tools screen: the built-in tools, then each MCP server
// with its state and its tools. What the server says is sanitised.
func toolsView(t client.Tools, width, height int) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(ansi.Wrap(s, width, "") + "\n") }
	var builtin []string
	for _, tl := range t.Tools {
		if tl.Server == "" {
			builtin = append(builtin, SanitizeLine(tl.Name))
		}
	}
	b.WriteString(styleName.Render("Built-in tools") + "\n")
	line("  " + strings.Join(builtin, ", "))
	for _, s := range t.Servers {
		b.WriteString("\n" + styleName.Render("MCP server "+SanitizeLine(s.Name)) + " " + styleMuted.Render("("+SanitizeLine(s.Transport)+")") + " ")
		state := SanitizeLine(s.Status)
		if s.Status == "failed" {
			state = styleWarn.Render(state)
		}
		b.WriteString(state + "\n")
		if s.Error != "" {
			line("  " + SanitizeLine(s.Error))
		}
		names := make([]string, len(s.Tools))
		for i, n := range s.Tools {
			names[i] = SanitizeLine(n)
		}
		if len(names) > 0 {
			line("  " + strings.Join(names, ", "))
		}
	}
	if len(t.Servers) == 0 {
		b.WriteString("\n" + styleMuted.Render("No MCP servers (toolmark serve --mcp-config FILE adds some).") + "\n")
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
