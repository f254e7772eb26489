package simplifiedagent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/simplifiedagent"
)

var (
	attPNG  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	attPDF  = []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	attText = "first line\n" + strings.Repeat("x", 200)
)

func attachments(pdf bool) []toolmark.Upload {
	ups := []toolmark.Upload{
		{Name: "cat.png", MediaType: "image/png", Size: int64(len(attPNG)), Data: attPNG},
		{Name: "notes.md", MediaType: "text/markdown", Size: int64(len(attText)), Data: []byte(attText)},
	}
	if pdf {
		ups = append(ups, toolmark.Upload{Name: "paper.pdf", MediaType: "application/pdf", Size: int64(len(attPDF)), Data: attPDF})
	}
	return ups
}

// TestAttachmentsReachProviders: the files attached to a question reach
// each provider in its own format, accepted by a fake that validates them
// as the API does: OpenAI and Azure an image_url data URL, Anthropic an
// image and a document block; text files as text, cut to the budget.
func TestAttachmentsReachProviders(t *testing.T) {
	for _, d := range []fp.Dialect{fp.OpenAI, fp.Azure, fp.Anthropic} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			pdf := d == fp.Anthropic
			srv := fp.Start(t, d, fp.Reply{Text: []string{"Seen."}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "What is in these?",
				Attachments: attachments(pdf), AttachmentTextBudget: 50, Documents: pdf, Retry: retryFast, Logger: discardLogger()}, newRecorder().emit)
			if err != nil || len(srv.Problems()) > 0 {
				t.Fatalf("got %v, problems %v", err, srv.Problems())
			}
			reqs := srv.Requests()
			msgs, _ := reqs[len(reqs)-1]["messages"].([]any)
			user, _ := json.Marshal(msgs[len(msgs)-1])
			b64 := base64.StdEncoding.EncodeToString(attPNG)
			wants := []string{`"type":"image_url"`, `"url":"data:image/png;base64,` + b64 + `"`}
			if d == fp.Anthropic {
				wants = []string{`"type":"image"`, `"data":"` + b64 + `"`, `"type":"document"`, `"media_type":"application/pdf"`, `[Attached file \"paper.pdf\", application/pdf`}
			}
			wants = append(wants, `What is in these?`, `[Attached file \"cat.png\", image/png, 29 bytes]`,
				`[Attached file \"notes.md\", text/markdown, 211 bytes]\nfirst line\nxxx`, `[… the rest of the file is cut]`)
			for _, w := range wants {
				if !strings.Contains(string(user), w) {
					t.Errorf("the question sent lacks %s:\n%s", w, user)
				}
			}
			if strings.Contains(string(user), strings.Repeat("x", 50)) {
				t.Errorf("the text file was not cut to the budget:\n%s", user)
			}
		})
	}
}

// TestResumedAnswerKeepsAttachments: an answer handed over to another
// replica (Request.Resume) sends its question with the same files.
func TestResumedAnswerKeepsAttachments(t *testing.T) {
	srv := fp.Start(t, fp.Anthropic, fp.Reply{Text: []string{"Seen."}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := simplifiedagent.Run(ctx, simplifiedagent.Request{Model: srv.Model(t), Input: "What is in these?",
		Attachments: attachments(true), Documents: true, Retry: retryFast, Logger: discardLogger(),
		Resume: &toolmark.Resume{Content: "It shows "}}, newRecorder().emit)
	if err != nil || len(srv.Problems()) > 0 {
		t.Fatalf("got %v, problems %v", err, srv.Problems())
	}
	reqs := srv.Requests()
	sent, _ := json.Marshal(reqs[len(reqs)-1]["messages"])
	for _, w := range []string{`"type":"image"`, `"type":"document"`, `[Attached file \"notes.md\"`, `It shows`} {
		if !strings.Contains(string(sent), w) {
			t.Errorf("the resumed request lacks %s:\n%s", w, sent)
		}
	}
}

// TestPDFAsText: a PDF goes to a model that takes no documents as its
// text, headed by its name, within the text budget it shares with text
// files; one without text says so.
func TestPDFAsText(t *testing.T) {
	for _, d := range []fp.Dialect{fp.OpenAI, fp.Anthropic} {
		t.Run(string(d), func(t *testing.T) {
			srv := fp.Start(t, d, fp.Reply{Text: []string{"Read."}})
			ups := []toolmark.Upload{
				{Name: "scan.pdf", MediaType: "application/pdf", Size: 800, Data: []byte("%PDF-1.4")},
				{Name: "report.pdf", MediaType: "application/pdf", Size: 900, Data: []byte("%PDF-1.4"), Text: "Quarterly report\n" + strings.Repeat("y", 100)},
			}
			_, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: srv.Model(t), Input: "Summarise",
				Attachments: ups, AttachmentTextBudget: 60, Retry: retryFast, Logger: discardLogger()}, newRecorder().emit)
			if err != nil || len(srv.Problems()) > 0 {
				t.Fatalf("got %v, problems %v", err, srv.Problems())
			}
			reqs := srv.Requests()
			sent, _ := json.Marshal(reqs[len(reqs)-1]["messages"])
			for _, w := range []string{`[Attached file \"report.pdf\", application/pdf, 900 bytes]\nQuarterly report\nyyy`,
				simplifiedagent.AttachmentCut[1:], `[Attached file \"scan.pdf\"`, simplifiedagent.PDFTextNote} {
				if !strings.Contains(string(sent), w) {
					t.Errorf("the request lacks %s:\n%s", w, sent)
				}
			}
			if strings.Contains(string(sent), `"document"`) || strings.Contains(string(sent), strings.Repeat("y", 40)) {
				t.Errorf("the PDF went as a document, or past the budget:\n%s", sent)
			}
		})
	}
}

// TestProvidersRefuseMislabeledImages: the fakes check an image's bytes
// against its type, as the APIs do (so the test above can fail).
func TestProvidersRefuseMislabeledImages(t *testing.T) {
	for _, d := range []fp.Dialect{fp.OpenAI, fp.Anthropic} {
		srv := fp.Start(t, d, fp.Reply{Text: []string{"Seen."}})
		bad := []toolmark.Upload{{Name: "cat.jpg", MediaType: "image/jpeg", Size: int64(len(attPNG)), Data: attPNG}}
		_, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: srv.Model(t), Input: "?",
			Attachments: bad, Retry: retryFast, Logger: discardLogger()}, newRecorder().emit)
		if err == nil || len(srv.Problems()) == 0 {
			t.Errorf("%s: a PNG sent as a JPEG was taken (err %v)", d, err)
		}
	}
}
