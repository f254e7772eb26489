package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/markdown"
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The palette: every colour the terminal client uses.
var (
	styleOK      = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleErr     = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleMuted   = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleSpinner = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	styleName    = lipgloss.NewStyle().Bold(true)
	styleUser    = lipgloss.NewStyle().Foreground(lipgloss.Color("4")).Bold(true)
	styleWarn    = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	styleHeader  = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleLabel   = lipgloss.NewStyle().Foreground(lipgloss.Color("5"))
)

// Marks of tool-call statuses: the final ones, and the still mark of a
// running call where no spinner turns (the one-shot output).
const (
	markRunning   = "▸"
	markOK        = "✓"
	markErr       = "✗"
	markCancelled = "⊘"
)

// renderer turns a turn's state into terminal lines: the answer's text as
// rendered markdown, a line per tool call (collapsed) or a block with its
// full parameters and result (expanded), and the task list.
//
// Markdown is rendered a block at a time (blocks end at blank lines outside
// code fences) and each block's rendering is kept: while an answer
// streams, only its trailing block is rendered again — and from it, an
// emphasis or code span not closed yet on its last line is held back
// (markdown.HoldBack), so no raw marker flashes.
type renderer struct {
	width int
	style string // a glamour standard style: dark, light, notty, …
	md    *glamour.TermRenderer
	cache map[string][]string // a block's source → its rendered lines
	// done is the streaming run's finished blocks: their source, a
	// prefix of the run, and their rendered lines, only ever appended to;
	// a draw renders only what follows.
	done struct {
		src   string
		lines []string
	}
	// live is the trailing block's last source and rendered lines, frozen
	// the lines of it no more text can change (live.go).
	live struct {
		src   string
		lines []string
	}
	frozen liveLines
	code   *codeStyle // how an open plain code block's line renders (code.go)
}

func newRenderer(width int, style string) *renderer {
	if style == "" {
		style = "dark"
	}
	r := &renderer{width: max(width, 20), style: style, cache: map[string][]string{}}
	md, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(r.width-4))
	if err == nil {
		r.md = md
	}
	return r
}

// markdown appends the lines of one run of answer text (sanitised
// already) to dst, tabs as four spaces; live holds back what its last line
// has not closed yet.
func (r *renderer) markdown(dst []string, text string, live bool) []string {
	// A tab is four columns: left in, the terminal moves it to its next tab
	// stop, which the renderer's padding and wrapping do not count.
	if strings.IndexByte(text, '\t') >= 0 {
		text = strings.ReplaceAll(text, "\t", "    ")
	}
	start := len(dst)
	if !live {
		for _, b := range splitBlocks(text) {
			dst = appendBlock(dst, start, r.blockLines(b))
		}
		return dst
	}
	if !strings.HasPrefix(text, r.done.src) {
		r.done.src, r.done.lines = "", nil
	}
	blocks := splitBlocks(text[len(r.done.src):])
	for _, b := range blocks[:max(len(blocks)-1, 0)] {
		// Finished: rendered once, kept with the run's finished part.
		r.done.src = text[:len(r.done.src)+strings.Index(text[len(r.done.src):], b)+len(b)]
		r.done.lines = appendBlock(r.done.lines, 0, r.blockLines(b))
	}
	dst = append(dst, r.done.lines...)
	if len(blocks) == 0 {
		return dst
	}
	return appendBlock(dst, start, r.liveBlock(markdown.HoldBack(blocks[len(blocks)-1])))
}

// appendBlock appends a rendered block's lines to dst, less the blank
// margins glamour puts around lists, code, quotes, tables and headings,
// after one blank line when dst has lines since start: blocks are one
// blank line apart, as on the page.
func appendBlock(dst []string, start int, lines []string) []string {
	lines = trimMargins(lines)
	if len(lines) == 0 {
		return dst
	}
	if len(dst) > start {
		dst = append(dst, "")
	}
	return append(dst, lines...)
}

// trimMargins returns lines without the lines that show nothing (glamour
// pads them with spaces) at their start and end. It reslices: the lines
// are shared.
func trimMargins(lines []string) []string {
	blank := func(l string) bool { return strings.TrimSpace(ansi.Strip(l)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// blockLines renders one block of markdown as lines (none for a blank
// one), or returns them from the cache. They are shared: never changed.
func (r *renderer) blockLines(text string) []string {
	if out, ok := r.cache[text]; ok {
		return out
	}
	var out []string
	if md := r.render(text); md != "" {
		out = strings.Split(md, "\n")
	}
	if len(r.cache) > 4096 {
		clear(r.cache)
	}
	r.cache[text] = out
	return out[:len(out):len(out)]
}

// render renders one block of markdown.
func (r *renderer) render(text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	if r.md != nil {
		if s, err := r.md.Render(text); err == nil {
			return strings.Trim(s, "\n")
		}
	}
	return text
}

// splitBlocks cuts markdown at blank lines that are not inside a fenced
// code block: each piece renders the same alone as within the whole (but
// for reference links and loose lists, which an answer seldom has).
func splitBlocks(text string) []string {
	var out []string
	start, fence := 0, ""
	pos := 0
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if fence == "" && t == "" && pos > start {
			out = append(out, text[start:pos])
			start = pos + len(line)
		}
		fence = nextFence(fence, t)
		pos += len(line)
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// finishedBlocks cuts text after its last blank line outside a fenced
// code block: done holds the blocks that are finished, rest the one still
// being written.
func finishedBlocks(text string) (done, rest string) {
	cut, fence, pos, content := 0, "", 0, false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if fence == "" && t == "" && strings.HasSuffix(line, "\n") && content {
			cut = pos + len(line)
		}
		fence = nextFence(fence, t)
		content = content || t != ""
		pos += len(line)
	}
	return text[:cut], text[cut:]
}

// nextFence returns the code fence open after a line (t, trimmed) when
// fence was open before it ("" outside a fenced code block).
func nextFence(fence, t string) string {
	switch {
	case fence != "":
		if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			return ""
		}
		return fence
	case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
		return t[:3]
	}
	return ""
}

// plainOpenFence returns block, the trailing block of an answer still
// being written, with the language of a code fence it leaves open replaced
// by "text": glamour then shows the code plain, and live.go renders it line
// by line, instead of highlighting it whole anew at every draw (up to
// markdown.LiveHighlightMax bytes that cost 1.5 s of a 40 KB answer's
// 3 s). The fence's closing, or the answer's end, brings the colours.
func plainOpenFence(block string) string {
	fence, open, pos := "", 0, 0
	for line := range strings.Lines(block) {
		t := strings.TrimSpace(line)
		if fence == "" {
			open = pos
		}
		fence = nextFence(fence, t)
		pos += len(line)
	}
	nl := strings.IndexByte(block[open:], '\n')
	if fence == "" || nl < 0 {
		return block
	}
	line := block[open : open+nl]
	info := strings.TrimLeft(line[strings.Index(line, fence):], fence[:1]) // the language and what follows it
	// "text": without a language, chroma would try every lexer on the code
	// to guess one.
	return block[:open] + strings.TrimSuffix(line, info) + "text" + block[open+nl:]
}

// turnView is what the renderer needs of a turn besides its state.
type turnView struct {
	acc      *client.Accumulator
	expanded bool
	frame    string // the spinner's current frame
	// live renders an answer that ended as one still streaming (its
	// trailing block as it was drawn last): its end shows at once, and
	// the full rendering follows (chat.ended).
	live bool
}

// turn renders a turn's answer.
func (r *renderer) turn(v turnView) string {
	return strings.Join(r.turnLines(nil, v), "\n")
}

// turnLines appends the lines of a turn's answer to dst.
func (r *renderer) turnLines(dst []string, v turnView) []string {
	start := len(dst)
	if th := r.reasoning(v.acc, v.expanded, v.frame); th != "" {
		dst = addLines(dst, th)
	}
	if todos := v.acc.Todos(); len(todos) > 0 {
		dst = addLines(dst, r.todos(todos))
	}
	content := v.acc.Content()
	spans := toolcallmarkup.Scan(content)
	depth := make([]int, len(spans))
	last := 0
	live := !v.acc.Status().Final() || v.live
	text := func(s string, last bool) {
		dst = r.markdown(dst, Sanitize(toolcallmarkup.RestoreText(s)), live && last)
	}
	for i, sp := range spans {
		if sp.Parent >= 0 {
			depth[i] = depth[sp.Parent] + 1
		} else {
			text(content[last:sp.Start], false)
			last = sp.End
		}
		c, ok := v.acc.ToolCall(sp.Call.ID)
		if !ok {
			c = client.ToolCall{ID: sp.Call.ID, Name: sp.Call.Type, Status: sp.Call.Status, Error: sp.Call.Error}
		}
		c.Markup = content[sp.Start:sp.OpenEnd]
		if v.expanded {
			dst = addLines(dst, r.toolBlock(c, depth[i]))
		} else {
			dst = addLines(dst, r.toolLine(c, depth[i], v.frame))
		}
	}
	text(content[last:], true)
	if end, ok := v.acc.End(); ok && end.Status != toolmark.TurnCompleted {
		dst = addLines(dst, endLine(end))
	}
	return trimBlank(dst, start)
}

// addLines appends the lines of s to dst.
func addLines(dst []string, s string) []string {
	if strings.IndexByte(s, '\n') < 0 {
		return append(dst, s)
	}
	return append(dst, strings.Split(s, "\n")...)
}

// trimBlank drops the empty lines at the end of dst, down to start.
func trimBlank(dst []string, start int) []string {
	for len(dst) > start && dst[len(dst)-1] == "" {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// endLine is the one line that tells how a turn that did not complete
// ended.
func endLine(end toolmark.TurnEndData) string {
	switch end.Status {
	case toolmark.TurnCancelled:
		return styleMuted.Render(markCancelled + " Answer cancelled")
	case toolmark.TurnInterrupted:
		return styleErr.Render(markErr + " Answer interrupted")
	}
	msg := "Answer failed"
	if end.Error != "" {
		msg += ": " + SanitizeLine(end.Error)
	}
	return styleErr.Render(markErr + " " + msg)
}

// icon is a call's status mark: the spinner while it is open.
func icon(c client.ToolCall, frame string) string {
	switch c.Status {
	case toolcallmarkup.StatusSuccess:
		return styleOK.Render(markOK)
	case toolcallmarkup.StatusError:
		return styleErr.Render(markErr)
	case toolcallmarkup.StatusCancelled:
		return styleMuted.Render(markCancelled)
	}
	return styleSpinner.Render(frame)
}

// statusText is the line the server wrote for c, or the one its tag gives.
func statusText(c client.ToolCall) string {
	return statustext.Line(c.StatusText, c.Markup)
}

// toolLine is the collapsed view of a call: its mark and the status text
// the page shows of it. Its parameters and result are in the expanded view.
func (r *renderer) toolLine(c client.ToolCall, depth int, frame string) string {
	return ansi.Truncate(strings.Repeat("  ", depth)+callLine(icon(c, frame), c), r.width, "…")
}

// callLine is a call's mark and its status text on one line, as the page
// words it ("Found 5 results for: go generics"): the subject muted, a
// failure's error after it.
func callLine(mark string, c client.ToolCall) string {
	head, subject := statustext.Lines(statusText(c))
	line := mark + " " + SanitizeLine(firstNonEmpty(head, c.Name))
	if subject != "" {
		line += " " + styleMuted.Render(SanitizeLine(subject))
	}
	if c.Status == toolcallmarkup.StatusError && c.Error != "" {
		line += " " + styleErr.Render(SanitizeLine(c.Error))
	}
	return line
}

// toolBlock is the expanded view of a call: its line, then its full
// parameters and its result or error.
func (r *renderer) toolBlock(c client.ToolCall, depth int) string {
	pad := strings.Repeat("  ", depth)
	var b strings.Builder
	head := pad + icon(c, "…") + " " + styleName.Render(SanitizeLine(c.Name)) + " " + styleMuted.Render(SanitizeLine(c.ID))
	b.WriteString(ansi.Truncate(head, r.width, "…"))
	b.WriteString("\n" + pad + "  " + SanitizeLine(statusText(c)))
	body := func(label, text string) {
		b.WriteString("\n" + pad + "  " + styleLabel.Render(label))
		wrapped := ansi.Wrap(Sanitize(text), max(r.width-len(pad)-4, 10), "")
		for _, l := range strings.Split(wrapped, "\n") {
			b.WriteString("\n" + pad + "    " + l)
		}
	}
	switch {
	case len(c.Args) > 0:
		pretty, _ := json.MarshalIndent(c.Args, "", "  ")
		body("parameters", string(pretty))
	case c.ArgsText != "":
		body("parameters", c.ArgsText)
	}
	if c.Result != "" {
		body("result", c.Result)
	}
	if c.Error != "" {
		body("error", c.Error)
	}
	return b.String()
}

var todoMarks = map[toolmark.TodoStatus]string{
	toolmark.TodoPending:     "○",
	toolmark.TodoInProgress:  "◐",
	toolmark.TodoDone:        markOK,
	toolmark.TodoCancelled:   markCancelled,
	toolmark.TodoInterrupted: markErr,
}

// todos renders the task list as a checklist with a done/total count.
func (r *renderer) todos(todos []toolmark.Todo) string {
	done := 0
	for _, t := range todos {
		if t.Status == toolmark.TodoDone {
			done++
		}
	}
	var b strings.Builder
	b.WriteString(styleName.Render("Plan") + styleMuted.Render(fmt.Sprintf(" %d/%d", done, len(todos))))
	for _, t := range todos {
		mark := todoMarks[t.Status]
		if mark == "" {
			mark = "○"
		}
		item := SanitizeLine(t.Text)
		switch t.Status {
		case toolmark.TodoDone:
			mark = styleOK.Render(mark)
			item = styleMuted.Render(item)
		case toolmark.TodoInProgress:
			mark = styleSpinner.Render(mark)
			item = styleName.Render(item)
		case toolmark.TodoCancelled, toolmark.TodoInterrupted:
			mark = styleMuted.Render(mark)
			item = styleMuted.Render(item)
		}
		b.WriteString("\n" + ansi.Truncate("  "+mark+" "+item, r.width, "…"))
	}
	return b.String()
}

// statusLine is the line under a running turn while its status bubble
// (client.Accumulator.Bubble) has something to say.
func statusLine(text, frame string) string {
	return styleSpinner.Render(frame) + " " + styleMuted.Render(SanitizeLine(text))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
