package toolcallmarkup

import "strings"

// Neutraliser turns a stream of untrusted text chunks (model or tool output)
// into text that can never form a genuine tag, exactly as a Document's
// AppendText does, without keeping the content. A producer of events (an
// agent) uses it to write the text of text_delta events; the Document that
// applies those events then appends them as they are.
//
// A suffix that the next chunk could change (part of "<ToolCall", part of a
// UTF-8 sequence) is held back until then or until Flush, so writing a text
// in one piece or byte by byte yields the same output. The zero value is
// ready to use. A Neutraliser is not safe for concurrent use.
type Neutraliser struct {
	pending string // untrusted text held back at a chunk boundary
	// heldAmp is true when the held-back text is a '&', then amps times
	// "amp;", then pending: a run that only later text can decide and that
	// has no length limit, so it is kept as a count and never scanned again.
	heldAmp bool
	amps    int
}

// Write neutralises the chunk s and returns the text that is decided now.
func (z *Neutraliser) Write(s string) string {
	prefix, in := "", s
	if z.heldAmp {
		// Only what follows the run of "amp;" decides the '&'.
		rest := z.pending + s
		for strings.HasPrefix(rest, "amp;") {
			z.amps++
			rest = rest[4:]
		}
		m := matchRef(rest)
		if m == partialMatch {
			z.pending = rest
			return ""
		}
		prefix = "&"
		if m == fullMatch {
			prefix += "amp;"
		}
		prefix += strings.Repeat("amp;", z.amps)
		z.heldAmp, z.pending, z.amps = false, "", 0
		in = rest
	} else if z.pending != "" {
		in = z.pending + s
	}
	out, rest := neutralise(prefix, in, false)
	z.hold(rest)
	return out
}

// hold keeps rest, the undecided end of the text, until the next chunk.
func (z *Neutraliser) hold(rest string) {
	z.pending = rest
	if rest == "" || rest[0] != '&' {
		return
	}
	r := rest[1:]
	n := 0
	for strings.HasPrefix(r, "amp;") {
		n++
		r = r[4:]
	}
	z.heldAmp, z.amps, z.pending = true, n, r
}

// Flush decides the held-back text and returns it, neutralised. Call it at
// the end of a reply and before anything that is not text (a tag) follows.
func (z *Neutraliser) Flush() string {
	if z.pending == "" && !z.heldAmp {
		return ""
	}
	in := z.pending
	if z.heldAmp {
		in = "&" + strings.Repeat("amp;", z.amps) + z.pending
	}
	out, _ := neutralise("", in, true)
	z.pending, z.heldAmp, z.amps = "", false, 0
	return out
}

// Held reports whether text is held back, waiting for the next chunk or
// Flush.
func (z *Neutraliser) Held() bool { return z.pending != "" || z.heldAmp }
