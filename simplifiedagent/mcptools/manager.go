package mcptools

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/toolmark/toolmark/simplifiedagent"
)

// Options tunes a Manager. Zero values take the defaults in brackets.
type Options struct {
	Logger         *slog.Logger  // [slog.Default()]
	ClientName     string        // the client name servers see ["toolmark"]
	ClientVersion  string        // ["dev"]
	ConnectTimeout time.Duration // starting and initialising a server [30s]
	MinBackoff     time.Duration // the first wait before a reconnect [1s]
	MaxBackoff     time.Duration // the longest [1m]
	HTTPClient     *http.Client  // for http and sse servers [a new http.Client]
}

// Manager keeps the connections to a config's servers and offers their
// tools. Each server is connected in the background: one that cannot start
// or be reached has no tools, is logged in one line, and is tried again
// with backoff; one whose connection ends (a stdio server that exits) is
// restarted. It is safe for concurrent use.
type Manager struct {
	servers []*server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
}

// New returns a Manager of cfg's enabled servers; Start connects them.
func New(cfg *Config, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ClientName == "" {
		opts.ClientName = "toolmark"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(time.Minute, opts.MinBackoff)
	}
	m := &Manager{}
	if cfg == nil {
		return m
	}
	for _, sc := range cfg.Servers {
		if !sc.Disabled {
			m.servers = append(m.servers, newServer(sc, cfg.Inherit, &opts))
		}
	}
	return m
}

// Start connects every server in the background until Close.
func (m *Manager) Start(ctx context.Context) {
	m.once.Do(func() {
		ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
		for _, s := range m.servers {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				s.run(ctx)
			}()
		}
	})
}

// Close ends every connection and stops every stdio server.
func (m *Manager) Close() error {
	m.once.Do(func() {}) // a Manager never started stays so
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
	return nil
}

// WaitReady waits until every server has connected or failed once, or ctx
// ends.
func (m *Manager) WaitReady(ctx context.Context) error {
	for _, s := range m.servers {
		for {
			s.mu.Lock()
			st, ready := s.status, s.ready
			s.mu.Unlock()
			if st != StatusConnecting {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-ready:
			}
		}
	}
	return nil
}

// Tools returns the tools the servers now offer, named so that no name is
// one of builtin's nor another server's. Servers come in the order of their
// names, their tools in the order they list them, so names are stable.
func (m *Manager) Tools(builtin ...string) []*Tool {
	taken := map[string]bool{}
	for _, n := range builtin {
		taken[n] = true
	}
	var out []*Tool
	for _, s := range m.sorted() {
		for _, def := range s.toolList() {
			out = append(out, &Tool{name: toolName(s.cfg.Name, def.Name, taken), srv: s, def: def, params: schema(def)})
		}
	}
	return out
}

// AgentTools is Tools as []simplifiedagent.Tool.
func (m *Manager) AgentTools(builtin ...string) []simplifiedagent.Tool {
	ts := m.Tools(builtin...)
	out := make([]simplifiedagent.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// Servers returns the state of every enabled server, by name.
func (m *Manager) Servers(builtin ...string) []ServerStatus {
	names := map[*server][]string{}
	for _, t := range m.Tools(builtin...) {
		names[t.srv] = append(names[t.srv], t.name)
	}
	var out []ServerStatus
	for _, s := range m.sorted() {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, Transport: s.cfg.Transport, Status: s.status, Error: s.errText, Tools: names[s]}
		s.mu.Unlock()
		if st.Tools == nil {
			st.Tools = []string{}
		}
		out = append(out, st)
	}
	return out
}

func (m *Manager) sorted() []*server {
	out := append([]*server(nil), m.servers...)
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.Name < out[j].cfg.Name })
	return out
}
