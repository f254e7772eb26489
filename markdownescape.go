package toolmark

import "strings"

// markdownSpecial lists the characters EscapeMarkdown escapes.
const markdownSpecial = "\\`*_{}[]<>()#+-.!|~&$"

// EscapeMarkdown writes s as literal Markdown text: each character that
// can start or change Markdown (and the page's maths) backslash-escaped,
// control characters dropped. Punctuation with no meaning in Markdown
// ("/", ":", ",") is left alone: CommonMark would take its escape, but
// some renderers (the terminal's) show the backslash.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			continue
		case r < 0x80 && strings.ContainsRune(markdownSpecial, r):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
