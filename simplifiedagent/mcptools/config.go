package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Transports of a server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"
)

// DefaultTimeout is how long a call may go without an answer or a progress
// notification when the server's config sets no timeout.
const DefaultTimeout = 60 * time.Second

// Config is an mcpServers file, as Claude Desktop and Cursor write it.
type Config struct {
	File    string // the file it was read from, for messages
	Servers []ServerConfig
	// Inherit is the part of the environment every stdio server gets on
	// top of its own env: PATH, HOME and LANG as they were when the file
	// was read.
	Inherit map[string]string
}

// ServerConfig is one server of a Config.
type ServerConfig struct {
	Name      string
	Transport string // TransportStdio, TransportHTTP or TransportSSE
	// stdio
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// http and sse
	URL     string
	Headers map[string]string

	// Timeout is how long a call may go without an answer or a progress
	// notification (DefaultTimeout when the file sets none).
	Timeout  time.Duration
	Tools    []string // the tools offered, by their own names; nil for all
	Disabled bool
}

// ConfigError is a mistake in a config file: it names the file, the server
// and the field.
type ConfigError struct {
	File, Server, Field, Msg string
}

// Error implements error.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("MCP config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Server != "" {
		fmt.Fprintf(&b, ": server %q", e.Server)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	return b.String() + ": " + e.Msg
}

// inherited names the variables of toolmark's environment a stdio server
// gets besides its own env.
var inherited = []string{"PATH", "HOME", "LANG"}

// Load reads the config file at path. getenv expands ${VAR} and
// ${VAR:-default} in the values (os.Getenv when nil) and gives the PATH,
// HOME and LANG that stdio servers inherit.
func Load(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{File: path, Msg: "cannot be read: " + strings.TrimPrefix(err.Error(), "open "+path+": ")}
	}
	return Parse(data, path, getenv)
}

// Parse reads a config from data; file names it in errors.
func Parse(data []byte, file string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var top struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &ConfigError{File: file, Msg: "is not valid JSON: " + err.Error()}
	}
	if top.Servers == nil && !bytes.Contains(data, []byte(`"mcpServers"`)) {
		return nil, &ConfigError{File: file, Field: "mcpServers", Msg: "is missing"}
	}
	cfg := &Config{File: file, Inherit: map[string]string{}}
	for _, k := range inherited {
		if v := getenv(k); v != "" {
			cfg.Inherit[k] = v
		}
	}
	names := make([]string, 0, len(top.Servers))
	for n := range top.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sc, err := parseServer(n, top.Servers[n], getenv)
		if err != nil {
			err.File = file
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	return cfg, nil
}

// rawServer is a server's entry as written.
type rawServer struct {
	Type     *string           `json:"type"`
	Command  *string           `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Cwd      *string           `json:"cwd"`
	URL      *string           `json:"url"`
	Headers  map[string]string `json:"headers"`
	Timeout  *float64          `json:"timeout"`
	Tools    []string          `json:"tools"`
	Disabled *bool             `json:"disabled"`
}

func parseServer(name string, raw json.RawMessage, getenv func(string) string) (ServerConfig, *ConfigError) {
	fail := func(field, msg string) (ServerConfig, *ConfigError) {
		return ServerConfig{}, &ConfigError{Server: name, Field: field, Msg: msg}
	}
	if strings.TrimSpace(name) == "" {
		return fail("", "a server needs a name")
	}
	// Each field on its own, so that a value of the wrong type is named.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fail("", "must be a JSON object")
	}
	var r rawServer
	for key, v := range fields {
		dst := map[string]any{
			"type": &r.Type, "command": &r.Command, "args": &r.Args, "env": &r.Env, "cwd": &r.Cwd,
			"url": &r.URL, "headers": &r.Headers, "timeout": &r.Timeout, "tools": &r.Tools, "disabled": &r.Disabled,
		}[key]
		if dst == nil {
			continue // other clients' fields (autoApprove, …)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fail(key, "has the wrong type: "+wantType(key))
		}
	}
	sc := ServerConfig{Name: name, Timeout: DefaultTimeout, Args: r.Args, Tools: r.Tools, Disabled: r.Disabled != nil && *r.Disabled}
	x := &expander{getenv: getenv}
	sc.Command = x.str("command", deref(r.Command))
	for i := range sc.Args {
		sc.Args[i] = x.str(fmt.Sprintf("args[%d]", i), sc.Args[i])
	}
	sc.Cwd = x.str("cwd", deref(r.Cwd))
	sc.URL = x.str("url", deref(r.URL))
	sc.Env = x.strs("env", r.Env)
	sc.Headers = x.strs("headers", r.Headers)
	if x.err != nil {
		x.err.Server = name
		return ServerConfig{}, x.err
	}
	if r.Timeout != nil {
		if *r.Timeout <= 0 || *r.Timeout > 86400 {
			return fail("timeout", "must be a number of seconds between 0 and 86400")
		}
		sc.Timeout = time.Duration(*r.Timeout * float64(time.Second))
	}
	switch t := strings.ToLower(deref(r.Type)); t {
	case "":
		sc.Transport = TransportStdio
		if sc.Command == "" && sc.URL != "" {
			sc.Transport = TransportHTTP
		}
	case "stdio":
		sc.Transport = TransportStdio
	case "http", "streamable-http", "streamablehttp":
		sc.Transport = TransportHTTP
	case "sse":
		sc.Transport = TransportSSE
	default:
		return fail("type", fmt.Sprintf("is %q; use stdio, http or sse", t))
	}
	if sc.Transport == TransportStdio {
		if strings.TrimSpace(sc.Command) == "" {
			return fail("command", "is missing: a stdio server needs the command that starts it")
		}
		return sc, nil
	}
	u, err := url.Parse(sc.URL)
	switch {
	case sc.URL == "":
		return fail("url", "is missing: an "+sc.Transport+" server needs the URL of its endpoint")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fail("url", "is not an http:// or https:// URL")
	}
	return sc, nil
}

func wantType(key string) string {
	switch key {
	case "args", "tools":
		return "a list of strings"
	case "env", "headers":
		return "an object of strings"
	case "timeout":
		return "a number of seconds"
	case "disabled":
		return "true or false"
	}
	return "a string"
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expander expands ${VAR} and ${VAR:-default}; the first variable that is
// unset and has no default is an error.
type expander struct {
	getenv func(string) string
	err    *ConfigError
}

func (x *expander) str(field, s string) string {
	if x.err != nil || !strings.Contains(s, "${") {
		return s
	}
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		if v := x.getenv(sub[1]); v != "" {
			return v
		}
		if sub[2] != "" {
			return sub[3]
		}
		if x.err == nil {
			x.err = &ConfigError{Field: field, Msg: fmt.Sprintf("uses ${%s}, which is not set", sub[1])}
		}
		return ""
	})
}

func (x *expander) strs(field string, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x.str(field+"."+k, v)
	}
	return out
}
