package markdown

import (
	"github.com/yuin/goldmark/ast"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// KindToolCall is the ast.NodeKind of a genuine ToolCall element (*Node).
var KindToolCall = ast.NewNodeKind("ToolCall")

// Node is a genuine ToolCall element found in a message. A tag on a line of its
// own is a block node; a tag inside a paragraph, a list item or a table cell is
// an inline node. Nested calls (a sub-agent's tools) are the node's children,
// each again a *Node of the same type (block or inline) as its parent.
type Node struct {
	ast.BaseBlock

	// Call is the tool call as toolcallmarkup parsed it from the opening tag.
	Call toolcallmarkup.ToolCall

	// Inline reports whether the element sits inside a paragraph (rendered as
	// a <span>) rather than on a line of its own (rendered as a <div>).
	Inline bool

	// closeOnly marks a stray genuine closing tag of an element whose body
	// spans lines; it renders nothing.
	closeOnly bool
}

// NewNode returns a new Node for the tool call tc.
func NewNode(tc toolcallmarkup.ToolCall, inline bool) *Node {
	return &Node{Call: tc, Inline: inline}
}

// Kind implements ast.Node.Kind.
func (n *Node) Kind() ast.NodeKind { return KindToolCall }

// Type implements ast.Node.Type: ast.TypeInline for inline tags, ast.TypeBlock
// otherwise.
func (n *Node) Type() ast.NodeType {
	if n.Inline {
		return ast.TypeInline
	}
	return ast.TypeBlock
}

// IsRaw implements ast.Node.IsRaw: a ToolCall element has no markdown inside.
func (n *Node) IsRaw() bool { return true }

// Dump implements ast.Node.Dump.
func (n *Node) Dump(source []byte, level int) {
	kv := map[string]string{
		"Type":   n.Call.Type,
		"Status": string(n.Call.Status),
		"ID":     n.Call.ID,
	}
	if n.Call.ParentID != "" {
		kv["ParentID"] = n.Call.ParentID
	}
	if n.Call.Error != "" {
		kv["Error"] = n.Call.Error
	}
	for _, a := range n.Call.Attrs {
		kv["Attr."+a.Key] = a.Value
	}
	ast.DumpHelper(n, source, level, kv, nil)
}
