package toolmark

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Upload is a file a user uploaded to attach to turns: stored once per
// owner and content (SHA-256), its type found by sniffing its bytes.
type Upload struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	MediaType string    `json:"type"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	URL       string    `json:"url"` // where its owner reads the bytes
	CreatedAt time.Time `json:"createdAt"`
	// Data is the file's bytes, when they were read (the agent's input);
	// never in JSON.
	Data []byte `json:"-"`
	// Text is the text read from a PDF, for a model that takes no
	// documents (with Data, when it was read; "" when it has none); never
	// in JSON.
	Text string `json:"-"`
}

// Kinds of attachment, by what a model can take of them.
const (
	KindImage    = "image"    // PNG, JPEG, GIF, WebP: for models that take images
	KindDocument = "document" // PDF: for models that take documents, else as text
	KindText     = "text"     // UTF-8 text: to every model, as text
)

// Kind returns the kind of an upload of media type mt: KindImage,
// KindDocument or KindText.
func Kind(mt string) string {
	switch {
	case strings.HasPrefix(mt, "image/"):
		return KindImage
	case mt == "application/pdf":
		return KindDocument
	}
	return KindText
}

// UploadURL is the path at which an upload's owner reads its bytes.
func UploadURL(id string) string { return "/api/uploads/" + id }

// textTypes labels a text file by its extension (the bytes decide that it
// is text; the name only says which kind of text).
var textTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown",
	".csv": "text/csv", ".json": "application/json",
}

// SniffUpload returns the media type of a file named name with bytes data,
// found from the bytes: a raster image (RasterType), a PDF (%PDF-) or text
// (valid UTF-8 without NUL bytes: text/plain, or by its extension
// text/markdown, text/csv, application/json). Anything else, and an empty
// file, is an EINVALID error that names the file and says why.
func SniffUpload(name string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", Errorf(EINVALID, "file %q is empty", name)
	}
	if mt := RasterType(data); mt != "" {
		return mt, nil
	}
	if bytes.HasPrefix(data, []byte("%PDF-")) {
		return "application/pdf", nil
	}
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		if mt, ok := textTypes[strings.ToLower(path.Ext(name))]; ok {
			return mt, nil
		}
		return "text/plain", nil
	}
	return "", Errorf(EINVALID, "file %q is not a PNG, JPEG, GIF or WebP image, a PDF or UTF-8 text", name)
}

// MaxUploadName is the longest file name kept, in bytes.
const MaxUploadName = 255

// CleanUploadName returns the name an upload is kept under: the last
// element of the name a client sent (either slash), without control or
// format characters, at most MaxUploadName bytes (cut on a rune boundary),
// "file" when nothing is left. It is still hostile text: it is escaped
// wherever it is shown.
func CleanUploadName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > MaxUploadName {
		_, n := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-n]
	}
	if name == "" || name == "." || name == ".." {
		return "file"
	}
	return name
}

// AcceptsOf returns what a model of a provider takes beside text files
// when its configuration does not say: Anthropic images and PDFs,
// OpenAI-compatible and Azure models images, the demo model images (it
// only describes them; a PDF goes to it as its text, so that it can say
// how the text begins); others neither.
func AcceptsOf(provider string) (images, documents bool) {
	switch strings.ToLower(provider) {
	case "anthropic":
		return true, true
	case "openai", "azure", "demo", "":
		return true, false
	}
	return false, false
}

// CheckAttachments refuses the attachments a model cannot take (an EINVALID
// error naming the first such file and why): an image for a model without
// images, a PDF without text (Upload.Text, read already) for one without
// documents.
func CheckAttachments(ups []Upload, m ModelInfo) error {
	for _, u := range ups {
		switch Kind(u.MediaType) {
		case KindImage:
			if !m.Images {
				return Errorf(EINVALID, "file %q is an image, and the model %s does not take images", u.Name, m.Label)
			}
		case KindDocument:
			if !m.Documents && strings.TrimSpace(u.Text) == "" {
				return PDFTextError(u.Name, m.Label, "")
			}
		}
	}
	return nil
}

// PDFTextError is the EINVALID error for a PDF named name that goes as
// text to the model labelled model, which takes no documents, and has no
// text that can be read; why, when known, says why not.
func PDFTextError(name, model, why string) error {
	if why == "" {
		why = "it has no text that can be read: a scan, encrypted or damaged"
	}
	return Errorf(EINVALID, "file %q is a PDF whose text cannot be read (%s), and the model %s does not take documents", name, why, model)
}

// attachmentPrefix starts an AttachmentHeader.
const attachmentPrefix = "[Attached file "

// AttachmentHeader is the line that introduces an attached file to a
// model: its name (quoted as Go quotes it), type and size. The demo model
// reads it back with ParseAttachmentHeader.
func AttachmentHeader(u Upload) string {
	return fmt.Sprintf("%s%s, %s, %d bytes]", attachmentPrefix, strconv.Quote(u.Name), u.MediaType, u.Size)
}

// ParseAttachmentHeader reads an AttachmentHeader at the start of s: the
// file's name, type and size and what follows the header.
func ParseAttachmentHeader(s string) (u Upload, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, attachmentPrefix)
	if !ok {
		return u, "", false
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return u, "", false
	}
	u.Name, _ = strconv.Unquote(q)
	meta, rest, ok := strings.Cut(s[len(q):], " bytes]")
	meta, found := strings.CutPrefix(meta, ", ")
	i := strings.LastIndex(meta, ", ")
	if !ok || !found || i < 0 {
		return Upload{}, "", false
	}
	if u.Size, err = strconv.ParseInt(meta[i+2:], 10, 64); err != nil {
		return Upload{}, "", false
	}
	u.MediaType = meta[:i]
	return u, rest, true
}
