package tui

import (
	"strconv"
	"strings"
)

// usageLine is the line under an answer, as the page shows it: the model
// that wrote it and its tokens when the model reported them
// ("gpt · 1,649 tokens in · 216 out").
func usageLine(e *entry) string {
	var parts []string
	if e.model != "" {
		parts = append(parts, SanitizeLine(e.model))
	}
	u := e.usage
	if end, ok := e.acc.End(); ok && end.Usage != nil {
		u = end.Usage
	}
	if u != nil && u.InputTokens+u.OutputTokens > 0 {
		parts = append(parts, thousands(u.InputTokens)+" tokens in · "+thousands(u.OutputTokens)+" out")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, " · ")
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
