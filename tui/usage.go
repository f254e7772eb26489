package tui

import "strconv"

// usageLine is the line of an answer's tokens, as the page shows them
// ("1,649 tokens in · 216 out"), when the model reported them.
func usageLine(e *entry) string {
	u := e.usage
	if end, ok := e.acc.End(); ok && end.Usage != nil {
		u = end.Usage
	}
	if u == nil || u.InputTokens+u.OutputTokens == 0 {
		return ""
	}
	return "  " + thousands(u.InputTokens) + " tokens in · " + thousands(u.OutputTokens) + " out"
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
