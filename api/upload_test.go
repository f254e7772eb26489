package api_test

import (
	"bytes"
	"encoding/json"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/testpdf"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00")

// upload posts files (name, bytes pairs) to /api/uploads.
func (c *client) upload(files ...string) (int, []toolmark.Upload, string) {
	c.tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := 0; i+1 < len(files); i += 2 {
		w, _ := mw.CreateFormFile("file", files[i])
		_, _ = w.Write([]byte(files[i+1]))
	}
	_ = mw.Close()
	st, _, b := c.do(http.MethodPost, "/api/uploads", body.String(), "Content-Type", mw.FormDataContentType())
	var out struct {
		Uploads []toolmark.Upload `json:"uploads"`
	}
	if st == http.StatusCreated {
		if err := json.Unmarshal(b, &out); err != nil {
			c.tb.Fatalf("decoding %s: %v", b, err)
		}
	}
	return st, out.Uploads, string(b)
}

func mustUpload(tb testing.TB, c *client, name, data string) toolmark.Upload {
	tb.Helper()
	st, ups, body := c.upload(name, data)
	if st != http.StatusCreated || len(ups) != 1 {
		tb.Fatalf("uploading %s: got %d %s", name, st, body)
	}
	return ups[0]
}

func TestUploads(t *testing.T) {
	t.Parallel()
	_, alice, bob := tokenServerWith(t, testserver.Options{Uploads: app.UploadLimits{File: 1000, Files: 3, User: 2500}})
	img := mustUpload(t, alice, "photo.txt", string(tinyPNG))
	if img.MediaType != "image/png" || img.Size != int64(len(tinyPNG)) || img.Name != "photo.txt" || img.URL != "/api/uploads/"+img.ID {
		t.Fatalf("got %+v, want a PNG sniffed from its bytes", img)
	}
	if again := mustUpload(t, alice, "again.png", string(tinyPNG)); again.ID != img.ID {
		t.Errorf("the same bytes again: got id %s, want %s", again.ID, img.ID)
	}
	if other := mustUpload(t, bob, "photo.png", string(tinyPNG)); other.ID == img.ID {
		t.Errorf("another user's same bytes got the same id")
	}

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			name, data string
			status     int
		}{
			{"binary.txt", "\x00\x01\x02", 400},
			{"archive.zip", "PK\x03\x04\x14\x00", 400},
			{"empty.txt", "", 400},
			{"big.txt", strings.Repeat("a", 1001), 413},
		} {
			st, _, body := alice.upload("ok.txt", "fine", tt.name, tt.data)
			if st != tt.status || !strings.Contains(body, tt.name) {
				t.Errorf("%s: got %d %s, want %d naming the file", tt.name, st, body, tt.status)
			}
		}
		if st, _, body := alice.upload("a", "1", "b", "2", "c", "3", "d", "4"); st != 400 {
			t.Errorf("4 files where 3 are allowed: got %d %s", st, body)
		}
		if st, _, _ := alice.upload("fine", "fine"); st != 201 {
			t.Errorf("a refused request kept a file? fine.txt: %d", st)
		}
	})

	t.Run("user total", func(t *testing.T) {
		for i, ch := range "xyz" {
			st, _, body := bob.upload("f.txt", strings.Repeat(string(ch), 900))
			if want := map[bool]int{true: 201, false: 413}[i < 2]; st != want {
				t.Errorf("file %d: got %d %s, want %d", i, st, body, want)
			}
		}
	})

	t.Run("served", func(t *testing.T) {
		st, h, b := alice.do("GET", img.URL, "")
		if st != 200 || !bytes.Equal(b, tinyPNG) || h.Get("Content-Type") != "image/png" ||
			h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") ||
			!strings.HasPrefix(h.Get("Content-Disposition"), "inline") {
			t.Fatalf("image: got %d %v", st, h)
		}
		if st, _, _ := bob.do("GET", img.URL, ""); st != 404 {
			t.Errorf("another user's upload: got %d, want 404", st)
		}
		hostile := "<svg onload=alert(1)>\r\n\".html"
		svg := mustUpload(t, alice, hostile, `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
		st, h, _ = alice.do("GET", svg.URL, "")
		disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
		if st != 200 || svg.MediaType != "text/plain" || h.Get("Content-Type") != "text/plain; charset=utf-8" ||
			err != nil || disp != "attachment" || params["filename"] != svg.Name || strings.ContainsAny(svg.Name, "\r\n") {
			t.Fatalf("SVG: got %d %+v %v, disposition %q %v", st, svg, h, disp, params)
		}
	})
}

// TestTurnAttachmentsCheckedAtStart: an attachment that is not the user's
// is a 404 naming it; a file the model cannot take is a 400 naming it and
// why, and no turn starts.
func TestTurnAttachmentsCheckedAtStart(t *testing.T) {
	t.Parallel()
	// A provider that takes text only (its server is never reached: the
	// turn is refused before it starts).
	_, alice, bob := tokenServerWith(t, testserver.Options{Model: &app.ModelConfig{Provider: "mistral", Name: "m", BaseURL: "http://127.0.0.1:1", APIKey: "k"}})
	conv := alice.newConversation()
	img := mustUpload(t, alice, "cat.png", string(tinyPNG))
	pdf := mustUpload(t, alice, "paper.pdf", "%PDF-1.4\n")
	drawing := mustUpload(t, alice, "drawing.pdf", string(testpdf.New(t, "", "")))
	txt := mustUpload(t, alice, "notes.md", "# notes")
	theirs := mustUpload(t, bob, "bob.txt", "bob's")
	for _, tt := range []struct {
		ids    []string
		status int
		want   string
	}{
		{[]string{txt.ID, theirs.ID}, 404, theirs.ID},
		{[]string{"no-such-upload"}, 404, "no-such-upload"},
		{[]string{txt.ID, img.ID}, 400, `\"cat.png\" is an image`},
		{[]string{pdf.ID}, 400, `\"paper.pdf\" is a PDF whose text cannot be read (it is damaged`},
		{[]string{drawing.ID}, 400, `\"drawing.pdf\" is a PDF whose text cannot be read (it has no text`},
		{[]string{drawing.ID}, 400, `\"drawing.pdf\" is a PDF whose text cannot be read (it has no text that can be read`}, // kept from the first time
	} {
		body, _ := json.Marshal(toolmark.TurnInput{Content: "look", Attachments: tt.ids})
		st, _, b := alice.do("POST", "/api/conversations/"+conv+"/turns", string(body))
		if st != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%v: got %d %s, want %d with %s", tt.ids, st, b, tt.status, tt.want)
		}
	}
	var out struct {
		Messages []json.RawMessage `json:"messages"`
	}
	alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &out)
	if len(out.Messages) != 0 {
		t.Errorf("refused turns left %d messages", len(out.Messages))
	}
}

// TestTurnWithAttachments: files attached to a turn reach the (demo)
// model, which names them in its answer, and the conversation lists them
// with the question.
func TestTurnWithAttachments(t *testing.T) {
	t.Parallel()
	_, alice, _ := tokenServer(t)
	conv := alice.newConversation()
	img := mustUpload(t, alice, "cat.png", string(tinyPNG))
	txt := mustUpload(t, alice, "notes.md", "# Shopping\nmilk")
	body, _ := json.Marshal(toolmark.TurnInput{Content: "What did I attach?", Attachments: []string{img.ID, txt.ID}})
	var out turnResp
	alice.mustJSON("POST", "/api/conversations/"+conv+"/turns", string(body), http.StatusAccepted, &out)
	alice.allEvents(out.Turn.ID, 0)
	var got struct {
		Content string `json:"content"`
	}
	alice.mustJSON("GET", "/api/turns/"+out.Turn.ID, "", 200, &got)
	for _, want := range []string{`cat\.png (image/png, 29 bytes)`, `notes\.md (text/markdown, 15 bytes), which begins: \# Shopping`} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("the answer lacks %q:\n%s", want, got.Content)
		}
	}
	var view struct {
		Messages []struct {
			Role        string            `json:"role"`
			Attachments []toolmark.Upload `json:"attachments"`
		} `json:"messages"`
	}
	alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &view)
	if len(view.Messages) == 0 || len(view.Messages[0].Attachments) != 2 || view.Messages[0].Attachments[1].Name != "notes.md" ||
		view.Messages[0].Attachments[0].URL != img.URL {
		t.Errorf("the question's attachments: got %+v", view.Messages)
	}
	if st, _, md := alice.do("GET", "/api/conversations/"+conv+"/export", ""); st != 200 ||
		!strings.Contains(string(md), "- 📎 [cat\\.png]("+img.URL+") (image/png, 29 bytes)") {
		t.Errorf("the Markdown export lacks the attachment link: %d %s", st, md)
	}
	if st, _, js := alice.do("GET", "/api/conversations/"+conv+"/export?format=json", ""); st != 200 ||
		!strings.Contains(string(js), `"attachments":[{"id":"`+img.ID+`"`) {
		t.Errorf("the JSON export lacks the attachments: %d %s", st, js)
	}
}

// TestRetryAndEditKeepAttachments: a regenerated question keeps its files;
// an edit keeps them unless it names others, [] for none.
func TestRetryAndEditKeepAttachments(t *testing.T) {
	t.Parallel()
	_, alice, _ := tokenServer(t)
	conv := alice.newConversation()
	txt := mustUpload(t, alice, "notes.md", "# Shopping\nmilk")
	body, _ := json.Marshal(toolmark.TurnInput{Content: "What did I attach?", Attachments: []string{txt.ID}})
	var out turnResp
	alice.mustJSON("POST", "/api/conversations/"+conv+"/turns", string(body), http.StatusAccepted, &out)
	alice.allEvents(out.Turn.ID, 0)
	questionFiles := func() int {
		var view struct {
			Messages []struct {
				ID          string            `json:"id"`
				Role        string            `json:"role"`
				Attachments []toolmark.Upload `json:"attachments"`
			} `json:"messages"`
		}
		alice.mustJSON("GET", "/api/conversations/"+conv, "", 200, &view)
		out.Turn.UserMessageID = view.Messages[0].ID
		return len(view.Messages[0].Attachments)
	}
	alice.mustJSON("POST", "/api/turns/"+out.Turn.ID+"/regenerate", "", http.StatusAccepted, &out)
	alice.allEvents(out.Turn.ID, 0)
	if n := questionFiles(); n != 1 {
		t.Fatalf("after regenerate the question has %d files, want 1", n)
	}
	alice.mustJSON("POST", "/api/messages/"+out.Turn.UserMessageID+"/edit", `{"content":"and now?","attachments":[]}`, http.StatusAccepted, &out)
	alice.allEvents(out.Turn.ID, 0)
	if n := questionFiles(); n != 0 {
		t.Fatalf("after an edit with no files the question has %d, want 0", n)
	}
}

// TestDeleteUpload: an upload is deleted by its owner only; one a stored
// question carries is kept (409, still readable) until its conversation is
// deleted.
func TestDeleteUpload(t *testing.T) {
	t.Parallel()
	_, alice, bob := tokenServer(t)
	loose := mustUpload(t, alice, "loose.md", "# not sent")
	kept := mustUpload(t, alice, "kept.md", "# sent")
	conv := alice.newConversation()
	body, _ := json.Marshal(toolmark.TurnInput{Content: "read this", Attachments: []string{kept.ID}})
	var out turnResp
	alice.mustJSON("POST", "/api/conversations/"+conv+"/turns", string(body), http.StatusAccepted, &out)
	alice.allEvents(out.Turn.ID, 0)
	for _, tt := range []struct {
		name   string
		who    *client
		method string
		path   string
		status int
		want   string
	}{
		{"another user's", bob, "DELETE", loose.URL, 404, "not found"},
		{"still there", alice, "GET", loose.URL, 200, "# not sent"},
		{"the owner's", alice, "DELETE", loose.URL, 204, ""},
		{"gone", alice, "GET", loose.URL, 404, "not found"},
		{"again", alice, "DELETE", loose.URL, 404, "not found"},
		{"attached", alice, "DELETE", kept.URL, 409, `\"kept.md\" is attached to 1 question(s)`},
		{"attached, still readable", alice, "GET", kept.URL, 200, "# sent"},
		{"its conversation deleted", alice, "DELETE", "/api/conversations/" + conv, 204, ""},
		{"then deletable", alice, "DELETE", kept.URL, 204, ""},
	} {
		st, _, b := tt.who.do(tt.method, tt.path, "")
		if st != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: %s %s: got %d %s, want %d with %q", tt.name, tt.method, tt.path, st, b, tt.status, tt.want)
		}
	}
}
