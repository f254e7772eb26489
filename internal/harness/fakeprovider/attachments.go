package fakeprovider

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolmark/toolmark"
)

// Attached files as the providers take them, checked as they check them:
//   - OpenAI (platform.openai.com, "Images and vision"): a user message's
//     content is an array of parts, {"type":"text","text":…} and
//     {"type":"image_url","image_url":{"url":"data:image/png;base64,…"}};
//     an image part outside a user message, or a data URL that is not a
//     base64 PNG, JPEG, GIF or WebP, is a 400.
//   - Anthropic (docs.anthropic.com, "Vision", "PDF support"): an image
//     block {"type":"image","source":{"type":"base64","media_type":…,
//     "data":…}} and a document block {"type":"document","source":
//     {"type":"base64","media_type":"application/pdf","data":…}}, in a user
//     message; bytes that are not of the type named are a 400.

// checkDataImage checks an image's base64 bytes against the media type it
// is sent as.
func checkDataImage(mediaType, data string) error {
	raw, err := base64.StdEncoding.DecodeString(data)
	switch {
	case err != nil:
		return fmt.Errorf("the image's data is not valid base64")
	case toolmark.RasterType(raw) == "":
		return fmt.Errorf("the image is not a PNG, JPEG, GIF or WebP")
	case toolmark.RasterType(raw) != mediaType:
		return fmt.Errorf("the image's media type %q does not match its bytes (%s)", mediaType, toolmark.RasterType(raw))
	}
	return nil
}

// validateOpenAIParts checks the content parts of message i.
func validateOpenAIParts(i int, m map[string]any) (int, string, string) {
	parts, ok := m["content"].([]any)
	if !ok {
		return 0, "", ""
	}
	bad := func(msg string) (int, string, string) {
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("Invalid 'messages[%d].content': %s", i, msg)
	}
	for j, p := range parts {
		pm, _ := p.(map[string]any)
		switch pm["type"] {
		case "text":
			if _, ok := pm["text"].(string); !ok {
				return bad(fmt.Sprintf("part %d: a text part needs text", j))
			}
		case "image_url":
			if m["role"] != "user" {
				return bad("image_url parts are only allowed in user messages")
			}
			iu, _ := pm["image_url"].(map[string]any)
			url, _ := iu["url"].(string)
			mt, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ";base64,")
			if !ok || !strings.HasPrefix(url, "data:") {
				return bad(fmt.Sprintf("part %d: expected a base64 data URL", j))
			}
			if err := checkDataImage(mt, data); err != nil {
				return bad(fmt.Sprintf("part %d: %v", j, err))
			}
		default:
			if m["role"] == "user" {
				return bad(fmt.Sprintf("part %d: unknown type %v", j, pm["type"]))
			}
		}
	}
	return 0, "", ""
}

// validateAnthropicSource checks the base64 source of an image or document
// block j of message i.
func validateAnthropicSource(i, j int, role string, b map[string]any) (int, string, string) {
	bad := func(msg string) (int, string, string) {
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("messages.%d.content.%d.%v.source: %s", i, j, b["type"], msg)
	}
	if role != "user" {
		return bad("images and documents are only allowed in user messages")
	}
	src, _ := b["source"].(map[string]any)
	mt, _ := src["media_type"].(string)
	data, _ := src["data"].(string)
	if src["type"] != "base64" {
		return bad("expected a base64 source")
	}
	if b["type"] == "image" {
		if err := checkDataImage(mt, data); err != nil {
			return bad(err.Error())
		}
		return 0, "", ""
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if mt != "application/pdf" || err != nil || !bytes.HasPrefix(raw, []byte("%PDF-")) {
		return bad("the PDF specified was not valid")
	}
	return 0, "", ""
}
