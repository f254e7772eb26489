package liveview

import (
	"sort"
	"strings"

	"github.com/yuin/goldmark/parser"
)

// Reference definitions: the finished blocks are rendered with the
// definitions of the whole message, so a definition that arrives later
// re-renders them.

func (l *View) finishedRefs() []parser.Reference {
	out := make([]parser.Reference, 0, len(l.refs))
	for _, r := range l.refs {
		out = append(out, r)
	}
	return out
}

// allRefs returns the definitions of the finished blocks, then those of the
// trailing block that they do not define (the first definition of a label
// wins).
func (l *View) allRefs() []parser.Reference {
	out := l.finishedRefs()
	for k, r := range l.tailRef {
		if _, ok := l.refs[k]; !ok {
			out = append(out, r)
		}
	}
	return out
}

// refsOf returns the definitions in refs that known does not hold, keyed
// by normalised label.
func refsOf(refs []parser.Reference, known map[string]parser.Reference) map[string]parser.Reference {
	var out map[string]parser.Reference
	for _, r := range refs {
		k := refKey(r)
		if _, ok := known[k]; ok {
			continue
		}
		if out == nil {
			out = map[string]parser.Reference{}
		}
		out[k] = r
	}
	return out
}

func refKey(r parser.Reference) string { return strings.ToLower(string(r.Label())) }

func refSignature(refs []parser.Reference) string {
	if len(refs) == 0 {
		return ""
	}
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = string(r.Label()) + "\x00" + string(r.Destination()) + "\x00" + string(r.Title())
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}
