package toolmark

import "strings"

// EscapeMarkdown writes s as literal Markdown text: every ASCII punctuation
// character backslash-escaped (CommonMark takes any of them so), control
// characters dropped.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			continue
		case r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
