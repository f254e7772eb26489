package toolmark_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolmark/toolmark"
)

var pngHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")

func TestSniffUpload(t *testing.T) {
	tests := []struct {
		name, file, data, want string
	}{
		{"png", "a.txt", string(pngHead), "image/png"},
		{"jpeg", "x", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"},
		{"gif", "x.png", "GIF89a\x01\x00\x01\x00", "image/gif"},
		{"webp", "x", "RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"pdf", "x.txt", "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "application/pdf"},
		{"plain", "notes", "hello\nworld", "text/plain"},
		{"markdown", "README.MD", "# Title", "text/markdown"},
		{"csv", "t.csv", "a,b\n1,2", "text/csv"},
		{"json", "d.json", `{"a":1}`, "application/json"},
		{"source", "main.go", "package main", "text/plain"},
		{"svg named png", "x.png", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, "text/plain"},
		{"html", "x.html", `<html><script>alert(1)</script>`, "text/plain"},
		{"binary", "x.txt", "\x00\x01\x02", ""},
		{"invalid utf-8", "x.txt", "caf\xe9", ""},
		{"empty", "x.txt", "", ""},
		{"zip", "x.zip", "PK\x03\x04\x14\x00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolmark.SniffUpload(tt.file, []byte(tt.data))
			if got != tt.want {
				t.Fatalf("got %q, want %q (err %v)", got, tt.want, err)
			}
			if tt.want == "" && (toolmark.ErrorCode(err) != toolmark.EINVALID || !strings.Contains(toolmark.ErrorMessage(err), tt.file)) {
				t.Fatalf("got error %v, want EINVALID naming %q", err, tt.file)
			}
		})
	}
}

func TestCleanUploadName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"photo.png", "photo.png"},
		{`C:\Users\me\photo.png`, "photo.png"},
		{"../../etc/passwd", "passwd"},
		{"a\x1b[31mred\r\n.txt", "a[31mred.txt"},
		{"\u202eexe.txt", "exe.txt"},
		{"", "file"},
		{"..", "file"},
		{strings.Repeat("é", 200), strings.Repeat("é", 127)},
	}
	for _, tt := range tests {
		if got := toolmark.CleanUploadName(tt.in); got != tt.want {
			t.Errorf("CleanUploadName(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSniffUpload: no panic; a type is one of the kept ones or an EINVALID
// error naming the file; a cleaned name is short valid UTF-8 without
// slashes or control characters.
func FuzzSniffUpload(f *testing.F) {
	f.Add("a.png", pngHead)
	f.Add("b.pdf", []byte("%PDF-1.7"))
	f.Add("c.md", []byte("# hi"))
	f.Add("d\x00/.svg", []byte("<svg/>"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		clean := toolmark.CleanUploadName(name)
		if !utf8.ValidString(clean) || len(clean) > toolmark.MaxUploadName || clean == "" || strings.ContainsAny(clean, "/\\\x00\n\r\x1b") {
			t.Fatalf("CleanUploadName(%q) = %q", name, clean)
		}
		mt, err := toolmark.SniffUpload(clean, data)
		if err != nil {
			if mt != "" || toolmark.ErrorCode(err) != toolmark.EINVALID {
				t.Fatalf("got %q, %v", mt, err)
			}
			return
		}
		switch toolmark.Kind(mt) {
		case toolmark.KindImage:
			if toolmark.RasterType(data) != mt {
				t.Fatalf("image type %q for bytes that are not one", mt)
			}
		case toolmark.KindText:
			if !utf8.Valid(data) {
				t.Fatalf("text type %q for invalid UTF-8", mt)
			}
		}
	})
}

// FuzzParseAttachmentHeader: a header made of any name, type and size
// reads back the same; any other text is read without a panic.
func FuzzParseAttachmentHeader(f *testing.F) {
	f.Add("cat.png", "image/png", int64(29), `[Attached file "a", text/plain, 3 bytes]`)
	f.Add("a\"b\\n, x, 1 bytes]", "text/plain", int64(0), `[Attached file "`)
	f.Fuzz(func(t *testing.T, name, mt string, size int64, raw string) {
		_, _, _ = toolmark.ParseAttachmentHeader(raw)
		if strings.Contains(mt, " bytes]") || !utf8.ValidString(name) || size < 0 {
			return // types are SniffUpload's, names valid UTF-8
		}
		u, rest, ok := toolmark.ParseAttachmentHeader(toolmark.AttachmentHeader(toolmark.Upload{Name: name, MediaType: mt, Size: size}) + "\nbody")
		if !ok || u.Name != name || u.MediaType != mt || u.Size != size || rest != "\nbody" {
			t.Fatalf("got %+v %q %v for %q %q %d", u, rest, ok, name, mt, size)
		}
	})
}
