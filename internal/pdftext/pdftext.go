// Package pdftext reads the text of a PDF, for a model that takes no
// documents: the file goes to it as text, like a text file.
//
// A PDF is hostile input. Text reads at most Limits.MaxPages pages and
// Limits.MaxText bytes of text, stops at Limits.Timeout, walks the page
// tree itself with a bounded number of nodes (a page tree that loops
// ends), and turns a panic of the PDF library into ErrDamaged. It uses
// github.com/ledongthuc/pdf, a maintained fork of rsc.io/pdf in pure Go
// that decodes fonts' ToUnicode maps (the text of most PDFs).
package pdftext

import (
	"bytes"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Errors of Text: why a PDF has no text to give.
var (
	ErrEncrypted = errors.New("it is encrypted")
	ErrDamaged   = errors.New("it is damaged or not a PDF")
	ErrNoText    = errors.New("it has no text to read (a scan or images only)")
	ErrTooSlow   = errors.New("its text took too long to read")
	ErrTooLarge  = errors.New("it is too large to read as text")
)

// Limits bound what Text does; a zero field takes its default.
type Limits struct {
	MaxBytes int           // the largest PDF read [20 MiB]
	MaxPages int           // pages read; the others are left out [500]
	MaxText  int           // bytes of text kept; the rest is cut [1 MiB]
	Timeout  time.Duration // reading stops with ErrTooSlow [5 s]
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 20 << 20
	}
	if l.MaxPages <= 0 {
		l.MaxPages = 500
	}
	if l.MaxText <= 0 {
		l.MaxText = 1 << 20
	}
	if l.Timeout <= 0 {
		l.Timeout = 5 * time.Second
	}
	return l
}

// Text returns the text of the PDF data, pages in order, a line break
// between text objects, spaces collapsed and blank lines dropped, at most
// lim.MaxText bytes (cut on a rune boundary). A PDF it cannot read is one
// of the errors above; one with no text but white space is ErrNoText.
func Text(data []byte, lim Limits) (string, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return "", ErrTooLarge
	}
	done := make(chan result, 1)
	r := &reading{lim: lim, deadline: time.Now().Add(lim.Timeout)}
	go func() { done <- r.read(data) }()
	timer := time.NewTimer(lim.Timeout + time.Second)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.text, res.err
	case <-timer.C:
		// The reading checks its deadline between operators; one that
		// blocks inside the library is left to end on its own.
		return "", ErrTooSlow
	}
}

type result struct {
	text string
	err  error
}

// reading is one run of Text.
type reading struct {
	lim      Limits
	deadline time.Time
	out      bytes.Buffer
	nodes    int // page-tree nodes visited
	pages    int // pages begun
}

// errStop ends a reading from inside the library's callback.
type errStop struct{ err error }

func (r *reading) read(data []byte) (res result) {
	defer func() {
		p := recover()
		stop, ok := p.(errStop)
		switch {
		case p == nil:
		case ok && stop.err != nil:
			res = result{err: stop.err}
		case ok: // a limit reached: what was read is the text
			res = r.result()
		default: // the library's own panic over a malformed file
			res = result{err: ErrDamaged}
		}
	}()
	rd, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return result{err: ErrEncrypted}
	case err != nil && strings.Contains(err.Error(), "encrypt"):
		return result{err: ErrEncrypted}
	case err != nil:
		return result{err: ErrDamaged}
	}
	r.walk(rd.Trailer().Key("Root").Key("Pages"), 0)
	return r.result()
}

// result is the text read so far, or ErrNoText.
func (r *reading) result() result {
	text := tidy(r.out.String(), r.lim.MaxText)
	if strings.TrimSpace(text) == "" {
		return result{err: ErrNoText}
	}
	return result{text: text}
}

// walk reads the pages under node of the page tree, in order, visiting
// at most 4×MaxPages nodes, 32 levels deep.
func (r *reading) walk(node pdf.Value, depth int) {
	r.nodes++
	if depth > 32 || r.nodes > 4*r.lim.MaxPages {
		panic(errStop{})
	}
	r.check()
	if node.Key("Type").Name() == "Page" || node.Key("Kids").IsNull() {
		r.page(pdf.Page{V: node})
		return
	}
	kids := node.Key("Kids")
	for i := range kids.Len() {
		r.walk(kids.Index(i), depth+1)
	}
}

// check stops the reading past its deadline or its text budget.
func (r *reading) check() {
	if time.Now().After(r.deadline) {
		panic(errStop{ErrTooSlow})
	}
	if r.out.Len() > r.lim.MaxText*2 {
		panic(errStop{})
	}
}

// page appends the text a page shows: the strings of its Tj, TJ, ' and "
// operators, decoded with the font in use.
func (r *reading) page(p pdf.Page) {
	if r.pages >= r.lim.MaxPages {
		panic(errStop{})
	}
	r.pages++
	r.out.WriteByte('\n')
	contents := p.V.Key("Contents")
	if contents.IsNull() {
		return
	}
	fonts := map[string]pdf.TextEncoding{}
	var enc pdf.TextEncoding
	show := func(v pdf.Value) {
		if v.Kind() != pdf.String {
			return
		}
		raw := v.RawString()
		if enc == nil {
			r.out.WriteString(raw)
			return
		}
		r.out.WriteString(enc.Decode(raw))
	}
	ops := 0
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		if ops++; ops%256 == 0 {
			r.check()
		}
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch {
		case op == "BT" || op == "T*":
			r.out.WriteByte('\n')
		case op == "Tf" && len(args) == 2:
			name := args[0].Name()
			if _, ok := fonts[name]; !ok {
				f := p.Font(name)
				fonts[name] = f.Encoder()
			}
			enc = fonts[name]
		case (op == "Tj" || op == "'") && len(args) == 1, op == `"` && len(args) == 3:
			show(args[len(args)-1])
		case op == "TJ" && len(args) == 1:
			for i := range args[0].Len() {
				show(args[0].Index(i))
			}
		}
	})
}

// tidy makes text of what the pages showed: valid UTF-8 without control
// characters but line breaks, runs of spaces as one, no blank lines, at
// most limit bytes.
func tidy(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for line := range strings.Lines(s) {
		line = strings.Join(strings.FieldsFunc(line, func(c rune) bool {
			return unicode.IsSpace(c) || unicode.IsControl(c) || unicode.Is(unicode.Cf, c)
		}), " ")
		if line == "" {
			continue
		}
		if b.Len()+len(line)+1 > limit {
			rest := min(limit-b.Len(), len(line))
			for rest > 0 && rest < len(line) && !utf8.RuneStart(line[rest]) {
				rest--
			}
			b.WriteString(line[:max(0, rest)])
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
