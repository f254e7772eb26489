package tui

import (
	"strings"
	"time"
	"unicode/utf8"

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
		// The title gives way to the date on a narrow screen.
		name = ansi.Truncate(name, max(width-2-2-ansi.StringWidth(meta), 8), "…")
		lines = append(lines, ansi.Truncate(mark+name+"  "+styleMuted.Render(meta), width, "…"))
		lines = append(lines, ansi.Truncate("    "+styleMuted.Render(cv.ID), width, "…"))
		if cv.Snippet != "" {
			// On a line of its own, from a little before the match.
			lines = append(lines, ansi.Truncate("    "+markMatches(SanitizeLine(cv.Snippet), p.query, width-4), width, "…"))
		}
	}
	top := 0
	if at+3 > height {
		top = at + 3 - height
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

// styleMatch marks the text a search found in a snippet.
var styleMatch = styleName.Reverse(true)

// markMatches returns text (sanitised already) in the muted style with each
// occurrence of query, in any case, marked; when the first one would not
// show in width columns, the text starts a little before it.
func markMatches(text, query string, width int) string {
	low, q := strings.ToLower(text), strings.ToLower(strings.TrimSpace(query))
	if q == "" || len(low) != len(text) {
		return styleMuted.Render(text)
	}
	if i := strings.Index(low, q); i >= 0 && ansi.StringWidth(text[:i])+len(q) > width {
		cut := i
		for n := 0; cut > 0 && n < width/3; n++ {
			_, size := utf8.DecodeLastRuneInString(text[:cut])
			cut -= size
		}
		text, low = "…"+text[cut:], "…"+low[cut:]
	}
	var b strings.Builder
	for at := 0; ; {
		i := strings.Index(low[at:], q)
		if i < 0 {
			b.WriteString(styleMuted.Render(text[at:]))
			return b.String()
		}
		b.WriteString(styleMuted.Render(text[at : at+i]))
		b.WriteString(styleMatch.Render(text[at+i : at+i+len(q)]))
		at += i + len(q)
	}
}
