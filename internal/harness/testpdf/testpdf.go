// Package testpdf writes small real PDFs for tests.
package testpdf

import (
	"bytes"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
)

// New returns a PDF with one A4 page per entry of pages: each line of an
// entry a line of text, an empty entry a page with a drawn box only (no
// text, as a scan has none). A non-empty password encrypts it.
func New(tb testing.TB, password string, pages ...string) []byte {
	tb.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	if password != "" {
		f.SetProtection(fpdf.CnProtectPrint, password, "owner")
	}
	f.SetFont("Helvetica", "", 12)
	for _, p := range pages {
		f.AddPage()
		if p == "" {
			f.Rect(20, 20, 50, 50, "F")
			continue
		}
		for _, line := range strings.Split(p, "\n") {
			f.Cell(0, 10, line)
			f.Ln(10)
		}
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
