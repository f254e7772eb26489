package pdftext_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/toolmark/toolmark/internal/harness/testpdf"
	"github.com/toolmark/toolmark/internal/pdftext"
)

var mustPDF = testpdf.New

// rawPDF writes a PDF of the given objects (numbered from 1) with its
// cross-reference table, object 1 its root.
func rawPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// loopedPages is a PDF whose page tree holds itself, twice at each level.
var loopedPages = rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R 2 0 R] /Count 1000000 >>")

// handWritten is a PDF with one page of text, written by hand.
var handWritten = rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
	"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
	"<< /Length 44 >>\nstream\nBT /F1 12 Tf (Hand written) Tj T* (PDF) Tj ET\nendstream")

func TestText(t *testing.T) {
	tests := []struct {
		name string
		pdf  []byte
		lim  pdftext.Limits
		want string // the text; "" when err is set
		err  error
	}{
		{"two pages", mustPDF(t, "", "Quarterly report\nRevenue rose", "Second page"), pdftext.Limits{},
			"Quarterly report\nRevenue rose\nSecond page", nil},
		{"a page limit", mustPDF(t, "", "one", "two", "three"), pdftext.Limits{MaxPages: 2}, "one\ntwo", nil},
		{"a text limit", mustPDF(t, "", "abcdefghij"), pdftext.Limits{MaxText: 4}, "abcd", nil},
		{"no text", mustPDF(t, "", ""), pdftext.Limits{}, "", pdftext.ErrNoText},
		{"encrypted", mustPDF(t, "secret", "hidden"), pdftext.Limits{}, "", pdftext.ErrEncrypted},
		{"garbage", []byte("%PDF-1.7\nnot really a PDF"), pdftext.Limits{}, "", pdftext.ErrDamaged},
		{"written by hand", handWritten, pdftext.Limits{}, "Hand written\nPDF", nil},
		{"a page tree that loops", loopedPages, pdftext.Limits{}, "", pdftext.ErrNoText},
		{"too large", mustPDF(t, "", "x"), pdftext.Limits{MaxBytes: 10}, "", pdftext.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pdftext.Text(tt.pdf, tt.lim)
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

// FuzzText: no input panics, hangs past the timeout or returns text that
// is not valid UTF-8, longer than the limit or with control characters
// other than line breaks; text and error never come together.
func FuzzText(f *testing.F) {
	f.Add(mustPDF(f, "", "Hello\nworld"))
	f.Add(mustPDF(f, "", ""))
	f.Add(mustPDF(f, "pw", "x"))
	f.Add(loopedPages)
	f.Add(handWritten)
	f.Add([]byte("%PDF-1.4\n%%EOF"))
	lim := pdftext.Limits{MaxText: 512, MaxPages: 8}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := pdftext.Text(data, lim)
		if err != nil && got != "" {
			t.Fatalf("text %q with error %v", got, err)
		}
		if len(got) > 512 || !utf8.ValidString(got) {
			t.Fatalf("text of %d bytes or not UTF-8: %q", len(got), got)
		}
		for _, r := range got {
			if r < ' ' && r != '\n' || r == 0x7f {
				t.Fatalf("control character %U in %q", r, got)
			}
		}
	})
}
