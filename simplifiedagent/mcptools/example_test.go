package mcptools_test

import (
	"fmt"

	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
)

func ExampleParse() {
	env := map[string]string{"HOME": "/home/ada", "TOKEN": "s3cret"}
	cfg, err := mcptools.Parse([]byte(`{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"]},
		"tracker": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 120}
	}}`), "mcp.json", func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range cfg.Servers {
		fmt.Println(s.Name, s.Transport, s.Args, s.Timeout)
	}
	_, err = mcptools.Parse([]byte(`{"mcpServers": {"tracker": {"type": "websocket", "url": "wss://x"}}}`), "mcp.json", nil)
	fmt.Println(err)
	// Output:
	// files stdio [-y @modelcontextprotocol/server-filesystem /home/ada/notes] 1m0s
	// tracker http [] 2m0s
	// MCP config mcp.json: server "tracker": field "type": is "websocket"; use stdio, http or sse
}
