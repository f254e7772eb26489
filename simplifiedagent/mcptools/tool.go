package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Tool is one tool of an MCP server as a simplifiedagent.Tool. Its name,
// offered to the model, is unique across servers and built-in tools and
// matches ^[a-zA-Z0-9_-]{1,64}$; its tag shows the server and the tool's own
// name (server="…" tool="…").
type Tool struct {
	name   string
	srv    *server
	def    *mcp.Tool
	params map[string]any
}

var (
	_ simplifiedagent.ParametersTool = (*Tool)(nil)
	_ simplifiedagent.TagAttrsTool   = (*Tool)(nil)
	_ simplifiedagent.TimeoutTool    = (*Tool)(nil)
)

// Name returns the name offered to the model.
func (t *Tool) Name() string { return t.name }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// Tool returns the tool's own name on its server.
func (t *Tool) Tool() string { return t.def.Name }

// Description returns the server's description of the tool.
func (t *Tool) Description() string {
	if d := strings.TrimSpace(t.def.Description); d != "" {
		return d
	}
	if t.def.Title != "" {
		return t.def.Title
	}
	return t.def.Name + " (a tool of " + t.srv.cfg.Name + ")"
}

// Parameters returns the tool's input schema.
func (t *Tool) Parameters() map[string]any { return t.params }

// TagAttrs shows the server and the tool's own name on the tag.
func (t *Tool) TagAttrs(map[string]any) []toolcallmarkup.Attr {
	return []toolcallmarkup.Attr{{Key: "server", Value: t.srv.cfg.Name}, {Key: "tool", Value: t.def.Name}}
}

// Timeout is long: a call is cut when its server is silent for the
// server's timeout (see ServerConfig.Timeout), not after a fixed time.
func (t *Tool) Timeout() time.Duration { return 24 * time.Hour }

// Call calls the tool with the model's JSON arguments and returns the text
// the model gets (see ResultText). Its raster images go to the call's
// success event (simplifiedagent.AttachImage). A result with isError fails
// with the tool's own text.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	args := json.RawMessage(strings.TrimSpace(input))
	if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
		args = json.RawMessage("{}")
	}
	res, err := t.srv.call(ctx, t.def.Name, args)
	if err != nil {
		return "", err
	}
	text := ResultText(res)
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && !res.IsError {
			simplifiedagent.AttachImage(ctx, img.Data) // shown in the call's details
		}
	}
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = fmt.Sprintf("%s failed", t.def.Name)
		}
		return "", &tools.Error{Msg: text, Err: fmt.Errorf("%s/%s: tool error", t.srv.cfg.Name, t.def.Name)}
	}
	return text, nil
}

// schema returns the input schema of def as a JSON schema object.
func schema(def *mcp.Tool) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(def.InputSchema); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// MaxNameLen is the longest tool name every provider accepts.
const MaxNameLen = 64

// toolName returns server_tool in the characters every provider accepts,
// at most MaxNameLen bytes, and not in taken; it marks it taken.
func toolName(server, tool string, taken map[string]bool) string {
	base := clean(server) + "_" + clean(tool)
	if len(base) > MaxNameLen {
		h := fnv.New32a()
		h.Write([]byte(server + "\x00" + tool))
		base = fmt.Sprintf("%s_%08x", base[:MaxNameLen-9], h.Sum32())
	}
	name := base
	for i := 2; taken[name]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = base[:min(len(base), MaxNameLen-len(suffix))] + suffix
	}
	taken[name] = true
	return name
}

func clean(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b)
}
