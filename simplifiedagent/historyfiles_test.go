package simplifiedagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/simplifiedagent"
)

// TestHistoryFiles: earlier questions' files go back to the model with the
// history, newest first, within the budget left by the question's own
// files; an image counts ImageCost; a file that does not fit is named and
// said to be left out; the same upload in two questions is sent where it
// fits only.
func TestHistoryFiles(t *testing.T) {
	img := toolmark.Upload{ID: "img", Name: "cat.png", MediaType: "image/png", Size: int64(len(attPNG))}
	note := toolmark.Upload{ID: "txt", Name: "notes.md", MediaType: "text/markdown", Size: 3000}
	pdf := toolmark.Upload{ID: "pdf", Name: "report.pdf", MediaType: "application/pdf", Size: 900, Text: "Quarterly report"}
	hist := func() []toolmark.HistoryTurn {
		return []toolmark.HistoryTurn{
			{TurnID: "1", UserText: "oldest", Attachments: []toolmark.Upload{img}},
			{TurnID: "2", UserText: "older", Attachments: []toolmark.Upload{note, pdf}},
			{TurnID: "3", UserText: "newest", Attachments: []toolmark.Upload{img}},
		}
	}
	ids := func(us []*toolmark.Upload) string {
		var s []string
		for _, u := range us {
			s = append(s, u.ID)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		name      string
		budget    int
		documents bool
		current   []toolmark.Upload
		load      string
		pdfText   string // the PDF's Text afterwards
	}{
		{"all fit", 100_000, false, nil, "img txt img", "Quarterly report"},
		{"as a document", 100_000, true, nil, "img txt pdf img", ""},
		{"the newest image and the PDF's text", simplifiedagent.ImageCost + 100, false, nil, "img", "Quarterly report"},
		{"the question's own image first", simplifiedagent.ImageCost + 100, false, []toolmark.Upload{img}, "", "Quarterly report"},
		{"nothing", 10, false, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hist()
			got := simplifiedagent.HistoryFiles(h, tt.current, tt.budget, tt.documents)
			if ids(got) != tt.load || h[1].Attachments[1].Text != tt.pdfText {
				t.Errorf("got load %q, PDF text %q; want %q, %q", ids(got), h[1].Attachments[1].Text, tt.load, tt.pdfText)
			}
		})
	}
}

// TestHistoryFilesReachProviders: an image sent two questions ago goes
// back with the history in each provider's format (the validating fakes
// take it), and a file left out is named with LeftOutNote.
func TestHistoryFilesReachProviders(t *testing.T) {
	for _, d := range []fp.Dialect{fp.OpenAI, fp.Anthropic} {
		t.Run(string(d), func(t *testing.T) {
			srv := fp.Start(t, d, fp.Reply{Text: []string{"A cat."}})
			hist := []toolmark.HistoryTurn{
				{TurnID: "1", UserText: "What is this?", AssistantContent: "A cat.", Attachments: []toolmark.Upload{
					{ID: "big", Name: "big.csv", MediaType: "text/csv", Size: 1 << 20},
					{ID: "img", Name: "cat.png", MediaType: "image/png", Size: int64(len(attPNG))},
				}},
				{TurnID: "2", UserText: "Thanks", AssistantContent: "You are welcome."},
			}
			for _, u := range simplifiedagent.HistoryFiles(hist, nil, 0, false) {
				u.Data = attPNG
			}
			_, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{Model: srv.Model(t), Input: "What colour was it?",
				History: simplifiedagent.BuildHistory("", hist), Retry: retryFast, Logger: discardLogger()}, newRecorder().emit)
			if err != nil || len(srv.Problems()) > 0 {
				t.Fatalf("got %v, problems %v", err, srv.Problems())
			}
			reqs := srv.Requests()
			msgs, _ := reqs[len(reqs)-1]["messages"].([]any)
			var first []byte
			for _, m := range msgs {
				if b, _ := json.Marshal(m); strings.Contains(string(b), "What is this?") {
					first = b
				}
			}
			want := []string{`"type":"image_url"`, `[Attached file \"big.csv\", text/csv, 1048576 bytes]\n` + simplifiedagent.LeftOutNote}
			if d == fp.Anthropic {
				want[0] = `"type":"image"`
			}
			for _, w := range want {
				if !strings.Contains(string(first), w) {
					t.Errorf("the earlier question lacks %s:\n%s", w, first)
				}
			}
		})
	}
}
