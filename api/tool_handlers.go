package api

import "net/http"

// Tools is what GET /api/tools answers: every tool the agent offers and
// the state of every MCP server.
type Tools struct {
	Tools   []ToolInfo   `json:"tools"`
	Servers []ToolServer `json:"servers"`
}

// ToolInfo is one tool the agent offers.
type ToolInfo struct {
	Name        string `json:"name"`   // the name the model calls it by
	Server      string `json:"server"` // its MCP server; "" for a built-in tool
	Tool        string `json:"tool"`   // its own name on its server (a built-in's name)
	Description string `json:"description"`
}

// ToolServer is the state of one MCP server.
type ToolServer struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"` // stdio, http or sse
	Status    string   `json:"status"`    // connected, connecting or failed
	Error     string   `json:"error,omitempty"`
	Tools     []string `json:"tools"` // the names offered to the model
}

// handleTools lists the tools the agent offers now. MCP servers are the
// operator's: no request adds or changes one.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	t := Tools{}
	if s.cfg.Tools != nil {
		t = s.cfg.Tools()
	}
	if t.Tools == nil {
		t.Tools = []ToolInfo{}
	}
	if t.Servers == nil {
		t.Servers = []ToolServer{}
	}
	writeJSON(w, http.StatusOK, t)
}
