package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/harness/testpdf"
)

// TestAttachmentsToTwoModels: an image, a PDF and a text file uploaded with
// the Go client reach the Anthropic model in its own format (checked by
// its validating fake); the OpenAI-compatible model, which takes no
// documents, gets the PDF's text with its name, the image as an image_url
// part and the text file as text; a PDF without text (damaged, or
// drawings only) is refused for it at start with a 400 naming it.
func TestAttachmentsToTwoModels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, openai, anthropic := twoModels(t, ctx)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	ups, err := c.Upload(ctx, client.File{Name: "cat.png", Data: png}, client.File{Name: "report.pdf", Data: testpdf.New(t, "", "Quarterly report\nRevenue rose")},
		client.File{Name: "notes.md", Data: []byte("# Shopping\nmilk")}, client.File{Name: "paper.pdf", Data: []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")},
		client.File{Name: "drawing.pdf", Data: testpdf.New(t, "", "")})
	if err != nil || len(ups) != 5 || ups[1].MediaType != "application/pdf" {
		t.Fatalf("Upload: got %+v, %v", ups, err)
	}
	img, pdf, txt, broken, drawing := ups[0].ID, ups[1].ID, ups[2].ID, ups[3].ID, ups[4].ID
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
	for _, want := range []string{`"type":"image"`, `"type":"document"`, `# Shopping\nmilk`, `[Attached file \"report.pdf\"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the Anthropic model's question lacks %s: %s", want, got)
		}
	}
	var apiErr *client.APIError
	for name, id := range map[string]string{"paper.pdf": broken, "drawing.pdf": drawing} {
		err = ask("gpt", txt, id)
		if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, `"`+name+`" is a PDF whose text cannot be read`) {
			t.Fatalf("a PDF without text to a model without documents: got %v, want a 400 naming %s", err, name)
		}
	}
	if err := ask("gpt", img, txt, pdf); err != nil {
		t.Fatal(err)
	}
	got = lastUser(openai.Requests())
	for _, want := range []string{`"type":"image_url"`, `data:image/png;base64,`, `# Shopping\nmilk`,
		`[Attached file \"report.pdf\", application/pdf, ` + strconv.FormatInt(ups[1].Size, 10) + ` bytes]\nQuarterly report\nRevenue rose`} {
		if !strings.Contains(got, want) {
			t.Errorf("the OpenAI model's question lacks %s: %s", want, got)
		}
	}
	if p := append(openai.Problems(), anthropic.Problems()...); len(p) > 0 {
		t.Errorf("the fakes refused what toolmark sent: %v", p)
	}
}

// TestEarlierFilesInHistory: a follow-up question two turns after an image
// was sent still gives the model that image (with the history, in its
// question), through the server, the store and the agent.
func TestEarlierFilesInHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, openai, _ := twoModels(t, ctx)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")
	ups, err := c.Upload(ctx, client.File{Name: "cat.png", Data: png}, client.File{Name: "report.pdf", Data: testpdf.New(t, "", "Quarterly report")})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := c.CreateConversation(ctx, "follow-up")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []toolmark.TurnInput{
		{Content: "What is in these?", Attachments: []string{ups[0].ID, ups[1].ID}},
		{Content: "Thanks."},
		{Content: "What colour was the cat?"},
	} {
		ti, err := c.PostTurnInput(ctx, conv.ID, in, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Stream(ctx, ti.Turn.ID, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := openai.Requests()
	msgs, _ := reqs[len(reqs)-1]["messages"].([]any)
	var first string
	for _, m := range msgs {
		if b, _ := json.Marshal(m); strings.Contains(string(b), "What is in these?") {
			first = string(b)
		}
	}
	for _, want := range []string{`"type":"image_url"`, `data:image/png;base64,`, `[Attached file \"report.pdf\"`, `Quarterly report`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first question, two turns later, lacks %s: %s", want, first)
		}
	}
	if p := openai.Problems(); len(p) > 0 {
		t.Errorf("the fake refused what toolmark sent: %v", p)
	}
}
