package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/need"
	"github.com/toolmark/toolmark/internal/harness/testpdf"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// protocolModels are a server's models for the protocol tests: two demo
// models that take every file, and one that takes text only.
var protocolModels = []app.ModelConfig{
	{ID: "quick", Label: "Quick demo", Provider: "demo", Images: true, Documents: true, Default: true},
	{ID: "deep", Label: "Deep demo", Provider: "demo", Images: true, Documents: true},
	{ID: "words", Label: "Words only", Provider: "demo"},
}

// nodeJSON runs a script of protocols/ with node and decodes what it prints.
func nodeJSON(t *testing.T, out any, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Dir = "protocols"
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 10 * time.Second
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v: %s", script, err, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// askedTurn is the last question of a conversation, its files and the
// model and text of its answer.
func askedTurn(t *testing.T, c *client, conv string) (files []string, model, answer string) {
	t.Helper()
	var page struct {
		Messages []struct {
			Role        string            `json:"role"`
			Content     string            `json:"content"`
			Model       string            `json:"model"`
			Attachments []toolmark.Upload `json:"attachments"`
		} `json:"messages"`
	}
	c.mustJSON("GET", "/api/conversations/"+conv, "", 200, &page)
	for _, m := range page.Messages {
		if m.Role == "user" {
			files = nil
			for _, a := range m.Attachments {
				files = append(files, a.Name+" "+a.MediaType)
			}
		} else {
			model, answer = m.Model, m.Content
		}
	}
	return files, model, answer
}

func dataURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// TestAISDKModelAndFiles: useChat's request through the AI SDK's own
// DefaultChatTransport: a body field names the model, the user message's
// file parts carry a data: URL and an upload's URL; the demo model names
// both files, the answer names its model, the question keeps its files.
// Regenerating with another model keeps them; an unknown model is refused
// with the valid ids.
func TestAISDKModelAndFiles(t *testing.T) {
	t.Parallel()
	need.NodePackage(t, "protocols", "ai", "scripts/need-protocols.sh")
	_, alice, _ := tokenServerWith(t, testserver.Options{Models: protocolModels})
	notes := mustUpload(t, alice, "notes.md", "# Shopping\nmilk")
	var out struct {
		Message struct {
			Parts []map[string]any `json:"parts"`
		} `json:"message"`
		Errors []string `json:"errors"`
	}
	ask := func(chat string, req map[string]any) {
		t.Helper()
		b, _ := json.Marshal(req)
		out.Errors = nil
		nodeJSON(t, &out, "ai-sdk-ask.mjs", alice.base, alice.token, chat, string(b))
	}
	parts := []map[string]any{
		{"type": "text", "text": "What did I attach?"},
		{"type": "file", "mediaType": "image/png", "filename": "dot.png", "url": dataURL("image/png", tinyPNG)},
		{"type": "file", "mediaType": "text/markdown", "filename": "notes.md", "url": alice.base + notes.URL},
	}
	ask("chat-files", map[string]any{"trigger": "submit-message", "parts": parts, "body": map[string]any{"model": "deep"}})
	if len(out.Errors) > 0 {
		t.Fatalf("errors: %q", out.Errors)
	}
	files, model, answer := askedTurn(t, alice, "chat-files")
	if strings.Join(files, ", ") != "dot.png image/png, notes.md text/markdown" || model != "deep" {
		t.Errorf("the question's files %q, answered by %q; want dot.png and notes.md, by deep", files, model)
	}
	for _, want := range []string{`dot\.png (image/png, 29 bytes)`, `notes\.md (text/markdown, 15 bytes), which begins: \# Shopping`} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}

	var history []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	alice.mustJSON("GET", "/api/ai-sdk/chat/chat-files", "", http.StatusOK, &history)
	if len(history) != 2 || len(history[0].Parts) != 3 || history[0].Parts[1]["type"] != "file" || history[0].Parts[1]["url"] != notes.URL ||
		history[0].Parts[1]["filename"] != "notes.md" || history[0].Parts[1]["mediaType"] != "text/markdown" {
		t.Errorf("the history's question: %+v, want its files as file parts", history)
	}

	ask("chat-files", map[string]any{"trigger": "regenerate-message", "parts": parts, "body": map[string]any{"model": "quick"}})
	if len(out.Errors) > 0 {
		t.Fatalf("regenerating: errors %q", out.Errors)
	}
	if files2, model, answer := askedTurn(t, alice, "chat-files"); strings.Join(files2, ", ") != strings.Join(files, ", ") || model != "quick" || !strings.Contains(answer, `dot\.png`) {
		t.Errorf("regenerated: files %q, model %q, answer %q; want the same files, by quick", files2, model, answer)
	}

	ask("chat-llama", map[string]any{"trigger": "submit-message", "parts": parts[:1], "body": map[string]any{"model": "llama"}})
	if len(out.Errors) != 1 || !strings.Contains(out.Errors[0], "use one of: quick, deep, words") {
		t.Errorf("an unknown model: errors %q, want one naming the valid ids", out.Errors)
	}
	if st, _, _ := alice.do("GET", "/api/conversations/chat-llama", ""); st != 404 {
		t.Errorf("a refused chat left a conversation: %d", st)
	}
}

// TestAGUIModelAndFiles: HttpAgent's run with forwardedProps.model and a
// user message of text, an image part with inline bytes and a document
// part with an upload's URL (@ag-ui/core 1.0.0's parts); the demo model
// names both files, the answer names its model.
func TestAGUIModelAndFiles(t *testing.T) {
	t.Parallel()
	needAGUIClient(t)
	_, alice, _ := tokenServerWith(t, testserver.Options{Models: protocolModels})
	paper := mustUpload(t, alice, "paper.pdf", "%PDF-1.4\n")
	req, _ := json.Marshal(map[string]any{
		"forwardedProps": map[string]any{"model": "deep"},
		"content": []map[string]any{
			{"type": "text", "text": "What did I attach?"},
			{"type": "image", "source": map[string]any{"type": "data", "value": base64.StdEncoding.EncodeToString(tinyPNG), "mimeType": "image/png"}},
			{"type": "document", "source": map[string]any{"type": "url", "value": paper.URL, "mimeType": "application/pdf"}, "metadata": map[string]any{"filename": "paper.pdf"}},
		},
	})
	var out struct {
		Outcome string   `json:"outcome"`
		Errors  []string `json:"errors"`
	}
	nodeJSON(t, &out, "ag-ui-ask.mjs", alice.base, alice.token, "thread-files", "run-1", string(req))
	if len(out.Errors) > 0 || out.Outcome != "success" {
		t.Fatalf("outcome %q, errors %q", out.Outcome, out.Errors)
	}
	files, model, answer := askedTurn(t, alice, "thread-files")
	if strings.Join(files, ", ") != "image-1.png image/png, paper.pdf application/pdf" || model != "deep" {
		t.Errorf("the question's files %q, answered by %q; want image-1.png and paper.pdf, by deep", files, model)
	}
	for _, want := range []string{`image\-1\.png (image/png, 29 bytes)`, `paper\.pdf (application/pdf, 9 bytes)`} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}
}

// TestProtocolQuestionsRefused: what the AI SDK and AG-UI routes refuse
// before anything starts — an unknown model (400 with the valid ids),
// another user's upload (404), bytes of no known type (400 naming the
// file), a file too large (413 naming it), text too long with a file, an image for a model that takes
// none, a URL elsewhere, an audio part — and no conversation is left.
func TestProtocolQuestionsRefused(t *testing.T) {
	t.Parallel()
	_, alice, bob := tokenServerWith(t, testserver.Options{Models: protocolModels, Uploads: app.UploadLimits{File: 4096}})
	theirs := mustUpload(t, bob, "bob.txt", "bob's")
	file := func(name, url string) map[string]any {
		return map[string]any{"type": "file", "filename": name, "mediaType": "application/octet-stream", "url": url}
	}
	aiSDKSaying := func(text, model string, files ...map[string]any) string {
		parts := append([]map[string]any{{"type": "text", "text": text}}, files...)
		b, _ := json.Marshal(map[string]any{"id": "chat-x", "trigger": "submit-message", "model": model,
			"messages": []map[string]any{{"id": "q1", "role": "user", "parts": parts}}})
		return string(b)
	}
	aiSDK := func(model string, files ...map[string]any) string { return aiSDKSaying("Look", model, files...) }
	agui := func(props any, parts ...map[string]any) string {
		b, _ := json.Marshal(map[string]any{"threadId": "chat-x", "runId": "r1", "forwardedProps": props,
			"messages": []map[string]any{{"id": "q1", "role": "user", "content": append([]map[string]any{{"type": "text", "text": "Look"}}, parts...)}}})
		return string(b)
	}
	image := func(src map[string]any) map[string]any { return map[string]any{"type": "image", "source": src} }
	for _, tt := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"ai-sdk unknown model", "/api/ai-sdk/chat", aiSDK("llama"), 400, "use one of: quick, deep, words"},
		{"ai-sdk another user's upload", "/api/ai-sdk/chat", aiSDK("", file("bob.txt", theirs.URL)), 404, theirs.ID},
		{"ai-sdk unknown type", "/api/ai-sdk/chat", aiSDK("", file("blob.bin", dataURL("application/octet-stream", []byte{0, 1, 2, 0xff}))), 400, `\"blob.bin\"`},
		{"ai-sdk too large", "/api/ai-sdk/chat", aiSDK("", file("big.txt", dataURL("text/plain", []byte(strings.Repeat("a", 5000))))), 413, `\"big.txt\" is larger than 4096 bytes`},
		{"ai-sdk image for a text model", "/api/ai-sdk/chat", aiSDK("words", file("dot.png", dataURL("image/png", tinyPNG))), 400, `\"dot.png\" is an image`},
		{"ai-sdk a URL elsewhere", "/api/ai-sdk/chat", aiSDK("", file("x.png", "https://example.com/api/uploads/1")), 400, `\"x.png\": only a data: URL`},
		{"ai-sdk text too long, with a file", "/api/ai-sdk/chat", aiSDKSaying(strings.Repeat("a", 64<<10+1), "", file("notes.txt", dataURL("text/plain", []byte("notes")))), 413, "longer than 65536 bytes"},
		{"ai-sdk bad base64", "/api/ai-sdk/chat", aiSDK("", file("x.png", "data:image/png;base64,@@@")), 400, `\"x.png\": malformed base64`},
		{"ag-ui unknown model", "/api/ag-ui", agui(map[string]any{"model": "llama"}), 400, "use one of: quick, deep, words"},
		{"ag-ui model not a string", "/api/ag-ui", agui(map[string]any{"model": 7}), 400, "forwardedProps.model"},
		{"ag-ui another user's upload", "/api/ag-ui", agui(nil, image(map[string]any{"type": "url", "value": theirs.URL})), 404, theirs.ID},
		{"ag-ui image for a text model", "/api/ag-ui", agui(map[string]any{"model": "words"}, image(map[string]any{"type": "data", "value": base64.StdEncoding.EncodeToString(tinyPNG), "mimeType": "image/png"})), 400, `\"image-1.png\" is an image`},
		{"ag-ui a provider's file", "/api/ag-ui", agui(nil, image(map[string]any{"type": "file", "value": "file-abc"})), 400, `\"image-1\": send its bytes`},
		{"ag-ui audio", "/api/ag-ui", agui(nil, map[string]any{"type": "audio", "source": map[string]any{"type": "data", "value": "AAAA", "mimeType": "audio/wav"}}), 400, "audio parts are not taken"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, _, b := alice.do("POST", tt.path, tt.body)
			if st != tt.status || !strings.Contains(string(b), tt.want) {
				t.Errorf("got %d %s, want %d with %s", st, b, tt.status, tt.want)
			}
		})
	}
	if st, _, _ := alice.do("GET", "/api/conversations/chat-x", ""); st != http.StatusNotFound {
		t.Errorf("refused questions left a conversation: %d", st)
	}
}

// TestProtocolPDFAsText: a PDF for a model that takes no documents goes as
// its text through the AI SDK and AG-UI routes, as through a turn's own
// route — inline (its text read once, before anything is kept, and kept
// with the upload) or named by an upload's URL; a PDF without text is
// refused before anything starts.
func TestProtocolPDFAsText(t *testing.T) {
	t.Parallel()
	_, alice, _ := tokenServerWith(t, testserver.Options{Models: protocolModels})
	report := testpdf.New(t, "", "Quarterly report\nRevenue rose")
	minutes := mustUpload(t, alice, "minutes.pdf", string(testpdf.New(t, "", "Minutes of the meeting")))
	aiSDK := func(chat string, files ...map[string]any) string {
		parts := append([]map[string]any{{"type": "text", "text": "Read this"}}, files...)
		b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "model": "words",
			"messages": []map[string]any{{"id": "q1", "role": "user", "parts": parts}}})
		return string(b)
	}
	agui := func(chat string, src map[string]any) string {
		b, _ := json.Marshal(map[string]any{"threadId": chat, "runId": "r1", "forwardedProps": map[string]any{"model": "words"},
			"messages": []map[string]any{{"id": "q1", "role": "user", "content": []map[string]any{{"type": "text", "text": "Read this"},
				{"type": "document", "source": src, "metadata": map[string]any{"filename": "report.pdf"}}}}}})
		return string(b)
	}
	for _, tt := range []struct{ name, chat, path, body, want string }{
		{"ag-ui inline", "chat-agui-pdf", "/api/ag-ui", agui("chat-agui-pdf", map[string]any{"type": "data", "value": base64.StdEncoding.EncodeToString(report), "mimeType": "application/pdf"}), "Quarterly report"},
		{"ai-sdk inline", "chat-sdk-pdf", "/api/ai-sdk/chat", aiSDK("chat-sdk-pdf", map[string]any{"type": "file", "mediaType": "application/pdf", "filename": "report.pdf", "url": dataURL("application/pdf", report)}), "Quarterly report"},
		{"ai-sdk upload", "chat-sdk-minutes", "/api/ai-sdk/chat", aiSDK("chat-sdk-minutes", map[string]any{"type": "file", "mediaType": "application/pdf", "filename": "minutes.pdf", "url": minutes.URL}), "Minutes of the meeting"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if st, _, b := alice.do("POST", tt.path, tt.body); st != http.StatusOK {
				t.Fatalf("got %d %s", st, b)
			}
			files, model, answer := askedTurn(t, alice, tt.chat)
			if len(files) != 1 || !strings.HasSuffix(files[0], " application/pdf") || model != "words" || !strings.Contains(answer, tt.want) {
				t.Errorf("files %q, model %q, answer:\n%s\nwant the PDF's first line %q, by words", files, model, answer, tt.want)
			}
		})
	}
	st, _, b := alice.do("POST", "/api/ai-sdk/chat", aiSDK("chat-scan", map[string]any{"type": "file", "mediaType": "application/pdf", "filename": "scan.pdf", "url": dataURL("application/pdf", testpdf.New(t, "", ""))}))
	if st != http.StatusBadRequest || !strings.Contains(string(b), `\"scan.pdf\" is a PDF whose text cannot be read (it has no text`) {
		t.Errorf("a PDF without text: got %d %s, want a 400 naming it", st, b)
	}
	if st, _, _ := alice.do("GET", "/api/conversations/chat-scan", ""); st != http.StatusNotFound {
		t.Errorf("a refused PDF left a conversation: %d", st)
	}
}
