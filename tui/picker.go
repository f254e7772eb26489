package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
)

// picker is the list of conversations that /list and /search open: a
// title per line with its date, the running mark and its whole id below
// it (for /open).
type picker struct {
	convs  []toolmark.Conversation
	cursor int
	query  string // the search it shows, "" for the list
}

// move moves the cursor by d.
func (p *picker) move(d int) {
	p.cursor = min(max(p.cursor+d, 0), max(len(p.convs)-1, 0))
}

// selected returns the conversation under the cursor.
func (p *picker) selected() (toolmark.Conversation, bool) {
	if len(p.convs) == 0 {
		return toolmark.Conversation{}, false
	}
	return p.convs[p.cursor], true
}

// view renders the list in width×height, the cursor's line in sight.
func (p *picker) view(width, height int) string {
	title := "Conversations"
	if p.query != "" {
		title = "Conversations holding “" + SanitizeLine(p.query) + "”"
	}
	lines := []string{ansi.Truncate(styleName.Render(title), width, "…"), ""}
	if len(p.convs) == 0 {
		lines = append(lines, styleMuted.Render("None. Esc goes back."))
	}
	at := 0
	for i, cv := range p.convs {
		if i == p.cursor {
			at = len(lines)
		}
		name := SanitizeLine(cv.Title)
		if name == "" {
			name = "(untitled)"
		}
		mark := "  "
		if i == p.cursor {
			mark = styleUser.Render("› ")
			name = styleName.Render(name)
		}
		meta := cv.UpdatedAt.Local().Format(time.DateTime)
		if cv.Running {
			meta += " · " + styleSpinner.Render("answer being written")
		}
		lines = append(lines, ansi.Truncate(mark+name+"  "+styleMuted.Render(meta), width, "…"))
		sub := cv.ID
		if cv.Snippet != "" {
			sub += "  " + SanitizeLine(cv.Snippet)
		}
		lines = append(lines, ansi.Truncate("    "+styleMuted.Render(sub), width, "…"))
	}
	top := 0
	if at+2 > height {
		top = at + 2 - height
	}
	lines = lines[min(top, len(lines)):]
	if len(lines) > height {
		lines = lines[:height]
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
