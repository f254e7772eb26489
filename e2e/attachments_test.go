package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// TestAttachmentsToTwoModels: an image, a PDF and a text file uploaded with
// the Go client reach the Anthropic model in its own format (checked by
// its validating fake); the PDF to the OpenAI-compatible model, which
// takes no documents, is refused at start with a 400 naming it; the image
// and the text file reach it as an image_url part and text.
func TestAttachmentsToTwoModels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, openai, anthropic := twoModels(t, ctx)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	ups, err := c.Upload(ctx, client.File{Name: "cat.png", Data: png}, client.File{Name: "paper.pdf", Data: []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")},
		client.File{Name: "notes.md", Data: []byte("# Shopping\nmilk")})
	if err != nil || len(ups) != 3 || ups[1].MediaType != "application/pdf" {
		t.Fatalf("Upload: got %+v, %v", ups, err)
	}
	img, pdf, txt := ups[0].ID, ups[1].ID, ups[2].ID
	conv, err := c.CreateConversation(ctx, "files")
	if err != nil {
		t.Fatal(err)
	}
	ask := func(model string, ids ...string) error {
		ti, err := c.PostTurnInput(ctx, conv.ID, toolmark.TurnInput{Content: "What is in these?", Model: model, Attachments: ids}, "")
		if err != nil {
			return err
		}
		_, err = c.Stream(ctx, ti.Turn.ID, nil)
		return err
	}
	if err := ask("claude", img, pdf, txt); err != nil {
		t.Fatal(err)
	}
	lastUser := func(reqs []map[string]any) string {
		msgs, _ := reqs[len(reqs)-1]["messages"].([]any)
		b, _ := json.Marshal(msgs[len(msgs)-1])
		return string(b)
	}
	got := lastUser(anthropic.Requests())
	for _, want := range []string{`"type":"image"`, `"type":"document"`, `# Shopping\nmilk`, `[Attached file \"paper.pdf\"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the Anthropic model's question lacks %s: %s", want, got)
		}
	}
	var apiErr *client.APIError
	err = ask("gpt", txt, pdf)
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, `"paper.pdf" is a PDF`) {
		t.Fatalf("a PDF to a model without documents: got %v, want a 400 naming it", err)
	}
	if err := ask("gpt", img, txt); err != nil {
		t.Fatal(err)
	}
	got = lastUser(openai.Requests())
	for _, want := range []string{`"type":"image_url"`, `data:image/png;base64,`, `# Shopping\nmilk`} {
		if !strings.Contains(got, want) {
			t.Errorf("the OpenAI model's question lacks %s: %s", want, got)
		}
	}
	if p := append(openai.Problems(), anthropic.Problems()...); len(p) > 0 {
		t.Errorf("the fakes refused what toolmark sent: %v", p)
	}
}
