package simplifiedagent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent"
)

// TestToolResultImages: an image a tool attaches reaches its success event
// and its tag (images="1"), and Anthropic's model gets it as an image block
// inside the call's tool_result; what is not a raster image is refused.
func TestToolResultImages(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	pngData := buf.Bytes()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, string(b))
		mu.Unlock()
		if n > 1 {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unexpected"}}`, 400)
			return
		}
		fixture, _ := os.ReadFile([]string{"testdata/anthropic/tool_1.sse", "testdata/anthropic/tool_2.sse"}[n])
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(fixture)
	}))
	defer srv.Close()
	model, err := simplifiedagent.NewAnthropic(srv.URL+"/v1", "sk-ant-test", "claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	var refused []bool
	shot := funcTool{name: "search_documents", fn: func(ctx context.Context, _ string) (string, error) {
		refused = append(refused, simplifiedagent.AttachImage(ctx, []byte(`<svg onload="alert(1)"/>`)),
			simplifiedagent.AttachImage(ctx, []byte("<html><script>x</script>")))
		if !simplifiedagent.AttachImage(ctx, pngData) {
			t.Error("the PNG was refused")
		}
		return "[image: image/png, 70 bytes]", nil
	}}
	_, rec, err := runChecked(t, simplifiedagent.Request{Model: model, Input: "a picture?", Tools: []simplifiedagent.Tool{shot}})
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 2 || refused[0] || refused[1] {
		t.Errorf("SVG and HTML kept: %v", refused)
	}
	ok := rec.ofType(toolmark.EventToolCallSuccess)
	if len(ok) != 1 {
		t.Fatalf("%d successes", len(ok))
	}
	d := ok[0].Data.(toolmark.ToolCallData)
	if len(d.Images) != 1 || d.Images[0].MediaType != "image/png" || !strings.Contains(d.Markup, `images="1"`) {
		t.Errorf("success: %d images, markup %s", len(d.Images), d.Markup)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	b64 := base64.StdEncoding.EncodeToString(pngData)
	// The content of the tool_result block: its text, then the image.
	result := bodies[1][strings.Index(bodies[1], `"tool_use_id"`):]
	if !strings.Contains(result, `"type":"image"`) || !strings.Contains(result, b64) || !strings.Contains(result, `"media_type":"image/png"`) {
		t.Errorf("the image is not in the tool_result: %.600s", result)
	}
}
