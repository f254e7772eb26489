package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ResultText returns what the model gets of a tool's result: its text
// content, its structuredContent as JSON (unless a text part already is
// that JSON), and a short description of each image, audio clip, linked or
// embedded resource — never their bytes as base64.
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %s]", mediaType(c.MIMEType, "image"), size(len(c.Data))))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s]", mediaType(c.MIMEType, "audio"), size(len(c.Data))))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", oneLine(c.Name), oneLine(c.URI)))
		case *mcp.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !textIsJSON(parts, b) {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

func embedded(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	if r.Text != "" && len(r.Blob) == 0 {
		return fmt.Sprintf("[resource %s]\n%s", oneLine(r.URI), r.Text)
	}
	return fmt.Sprintf("[resource: %s, %s, %s]", oneLine(r.URI), mediaType(r.MIMEType, "application"), size(len(r.Blob)))
}

// textIsJSON reports whether one of the text parts is the JSON value b.
func textIsJSON(parts []string, b []byte) bool {
	for _, p := range parts {
		var v any
		if json.Unmarshal([]byte(p), &v) != nil {
			continue
		}
		if c, err := json.Marshal(v); err == nil && bytes.Equal(c, b) {
			return true
		}
	}
	return false
}

func mediaType(t, kind string) string {
	t = oneLine(t)
	if t == "" {
		return kind
	}
	return t
}

func oneLine(s string) string { return toolcallmarkup.OneLine(s, 200) }

func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
