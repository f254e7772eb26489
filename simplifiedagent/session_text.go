package simplifiedagent

import (
	"strings"

	"github.com/toolmark/toolmark"
)

// The layout of the top-level text: how streamed model text is neutralised,
// held back at a possible tag start, and separated from the tags around it.

// appendLocked adds already neutralised top-level text to the tail and
// emits it.
func (s *session) appendLocked(out string) {
	if out == "" {
		return
	}
	if len(out) >= 2 {
		s.tail = out[len(out)-2:]
	} else {
		s.tail = (s.tail + out)[max(0, len(s.tail)+len(out)-2):]
	}
	s.afterTag = false
	// A text_delta must not end inside "<ToolCall" or "</ToolCall": replay
	// (Document.AppendNeutralised) escapes such an end, while the text that
	// follows may show it is no tag. It waits for the next text or event.
	text := s.textOut + out
	cut := len(text)
	for k := partialTagSuffix(text[:cut]); k > 0; k = partialTagSuffix(text[:cut]) {
		cut -= k
	}
	text, s.textOut = text[:cut], text[cut:]
	if text != "" {
		s.emitLocked(toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: text}})
	}
}

// partialTagSuffix returns the length of the end of s that is a proper
// prefix of "<ToolCall" or "</ToolCall", in any letter case.
func partialTagSuffix(s string) int {
	i := strings.LastIndexByte(s, '<')
	if i < 0 {
		return 0
	}
	end := s[i:]
	for _, name := range []string{"<ToolCall", "</ToolCall"} {
		if len(end) < len(name) && strings.EqualFold(name[:len(end)], end) {
			return len(end)
		}
	}
	return 0
}

// flushTextLocked emits text kept back by appendLocked.
func (s *session) flushTextLocked() {
	if s.textOut != "" {
		text := s.textOut
		s.textOut = ""
		s.emitLocked(toolmark.Draft{Type: toolmark.EventTextDelta, Data: toolmark.TextDeltaData{Text: text}})
	}
}

// text appends untrusted model text to the top-level content.
func (s *session) text(chunk string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || chunk == "" {
		return
	}
	if s.afterTag {
		chunk = strings.TrimLeft(chunk, "\r\n")
		if chunk == "" {
			return
		}
		chunk = "\n\n" + chunk
		s.afterTag = false
	}
	s.appendLocked(s.nz.Write(chunk))
}

// beforeTagLocked flushes held-back text and makes the content end with a
// blank line, so that a top-level tag starts a block of its own.
func (s *session) beforeTagLocked() {
	out := s.nz.Flush()
	s.appendLocked(out)
	if s.tail == "" {
		return
	}
	sep := "\n\n"
	if strings.HasSuffix(s.tail, "\n\n") {
		return
	} else if strings.HasSuffix(s.tail, "\n") {
		sep = "\n"
	}
	out = s.nz.Write(sep) + s.nz.Flush()
	s.appendLocked(out)
}

// tagOpenedLocked records that the top-level content now ends with a tag
// (beforeTagLocked made room for it): the next text starts a block of its
// own.
func (s *session) tagOpenedLocked() {
	s.afterTag = true
	s.tail = ">"
}
