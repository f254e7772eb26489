package markdown

import (
	"github.com/toolmark/toolmark/statustext"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// The status texts of widgets come from package statustext, which the
// server also uses to write ToolCallData.StatusText, so a widget, the web
// page's status bubble and the terminal client show the same words.

// StatusTextFunc returns the plain-text line a widget shows for tc, e.g.
// `Searching knowledge base for "go generics"…`. The renderer escapes it.
type StatusTextFunc = statustext.Func

// DisplayLimit is how many characters (runes) of a query, URL, task or tool
// name a default status text shows before cutting it with "…".
const DisplayLimit = statustext.DisplayLimit

// ErrorLimit is how many bytes of a tool's error text a widget shows.
const ErrorLimit = statustext.ErrorLimit

// Attr returns the value of tc's tool-specific attribute key, or "".
func Attr(tc toolcallmarkup.ToolCall, key string) string { return statustext.Attr(tc, key) }

// Truncate cuts s to at most n runes, ending it with "…" when it was cut.
func Truncate(s string, n int) string { return statustext.Truncate(s, n) }

func truncateBytes(s string, n int) string { return statustext.TruncateBytes(s, n) }

// DefaultStatusTexts returns the built-in status texts per tool type (see
// statustext.Defaults).
func DefaultStatusTexts() map[string]StatusTextFunc { return statustext.Defaults() }

// GenericStatusText is the status text of tool types without one of their
// own (see statustext.Generic).
func GenericStatusText(tc toolcallmarkup.ToolCall) string { return statustext.Generic(tc) }
