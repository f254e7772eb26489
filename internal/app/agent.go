package app

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/api"
	"github.com/toolmark/toolmark/runner"
	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/mcptools"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
	"github.com/toolmark/toolmark/store"
)

// systemPrompt tells a real model how toolmark wants it to work.
const systemPrompt = `You are a helpful assistant with tools. Use search_documents to look things up in the knowledge base before answering questions about it, fetch_url to read a web page the user names, todo_list to plan multi-part work, and subagent for a self-contained research task. Cite the sources you used. Answer in Markdown.`

// agent turns the runner's turns into simplifiedagent runs.
type agent struct {
	model  llms.Model
	retry  simplifiedagent.RetryPolicy
	log    *slog.Logger
	tools  []simplifiedagent.Tool
	name   string
	demo   bool
	db     *store.DB
	budget int
	mcp    *mcptools.Manager
	sub    *simplifiedagent.Subagent
	base   []simplifiedagent.Tool // what a sub-agent gets besides the MCP tools
}

func newAgent(cfg Config, db *store.DB) (*agent, error) {
	a := &agent{db: db, budget: cfg.ContextChar, retry: cfg.Model.Retry, log: cfg.Logger}
	if a.budget <= 0 {
		a.budget = 48_000
	}
	m := cfg.Model
	var err error
	switch strings.ToLower(m.Provider) {
	case "", "demo":
		dm := demo.New()
		dm.Config = m.Demo
		switch {
		case m.DemoDelay < 0:
			dm.Delay = 0
		case m.DemoDelay > 0:
			dm.Delay = m.DemoDelay
		}
		a.model, a.name, a.demo = dm, "demo", true
	case "openai":
		a.model, err = simplifiedagent.NewOpenAI(m.BaseURL, m.APIKey, m.Name)
		a.name = m.Name
	case "azure":
		a.model, err = simplifiedagent.NewAzureOpenAI(m.BaseURL, m.APIKey, m.Name, m.APIVersion)
		a.name = m.Name
	case "anthropic":
		a.model, err = simplifiedagent.NewAnthropic(m.BaseURL, m.APIKey, m.Name)
		a.name = m.Name
	case "mistral":
		a.model, err = simplifiedagent.NewMistral(m.BaseURL, m.APIKey, m.Name)
		a.name = m.Name
	default:
		return nil, toolmark.Errorf(toolmark.EINVALID, "unknown model provider %q: use demo, openai, azure, anthropic or mistral", m.Provider)
	}
	if err != nil {
		return nil, fmt.Errorf("configuring the %s model: %w", m.Provider, err)
	}
	base := []simplifiedagent.Tool{tools.NewSearchDocuments(db), tools.NewFetchURL(cfg.FetchAllow...)}
	if cfg.SearxNGURL != "" {
		base = append(base, tools.NewWebSearch(cfg.SearxNGURL))
	}
	a.base, a.sub = base, simplifiedagent.NewSubagent(a.model)
	a.tools = append(append([]simplifiedagent.Tool{}, base...), simplifiedagent.NewTodoList())
	a.mcp = mcptools.New(cfg.MCP, mcptools.Options{Logger: cfg.Logger, ClientVersion: Version})
	return a, nil
}

// toolsNow returns the tools of a turn: the built-in ones, the sub-agent
// (with the built-in search tools and the MCP tools) and the MCP servers'
// tools as they now stand.
func (a *agent) toolsNow() []simplifiedagent.Tool {
	names := []string{a.sub.Name()}
	for _, t := range a.tools {
		names = append(names, t.Name())
	}
	mcp := a.mcp.AgentTools(names...)
	sub := *a.sub
	sub.Tools = append(append([]simplifiedagent.Tool{}, a.base...), mcp...)
	out := append(append([]simplifiedagent.Tool{}, a.tools...), &sub)
	return append(out, mcp...)
}

// catalog lists the tools a turn gets and the MCP servers' states
// (GET /api/tools).
func (a *agent) catalog() api.Tools {
	var out api.Tools
	var builtin []string
	for _, t := range a.toolsNow() {
		info := api.ToolInfo{Name: t.Name(), Tool: t.Name(), Description: t.Description()}
		if m, ok := t.(*mcptools.Tool); ok {
			info.Server, info.Tool = m.Server(), m.Tool()
		} else {
			builtin = append(builtin, t.Name())
		}
		out.Tools = append(out.Tools, info)
	}
	for _, s := range a.mcp.Servers(builtin...) {
		out.Servers = append(out.Servers, api.ToolServer{Name: s.Name, Transport: s.Transport,
			Status: string(s.Status), Error: s.Error, Tools: s.Tools})
	}
	return out
}

// run answers one turn.
func (a *agent) run(ctx context.Context, in runner.Input, emit toolmark.EmitFunc) error {
	files, err := a.db.MessageUploads(ctx, in.Turn.UserMessageID)
	if err != nil {
		return err
	}
	req := simplifiedagent.Request{
		Model:       a.model,
		History:     simplifiedagent.BuildHistory(in.Summary, in.History),
		Input:       in.UserText,
		Attachments: files,
		Tools:       a.toolsNow(),
		System:      systemPrompt,
		Retry:       a.retry,
		Logger:      a.log,
	}
	if r := in.Resume; r != nil {
		req.Resume = r
	}
	_, err = simplifiedagent.Run(ctx, req, emit)
	return err
}

// seedCorpus loads the bundled documents into the knowledge base, so the
// demo model has something real to search. Documents are keyed by source,
// so seeding at every start changes nothing twice.
func seedCorpus(ctx context.Context, db *store.DB) (int, error) {
	corpus := toolmark.DemoCorpus()
	paths, err := fs.Glob(corpus, "testdata/corpus/*.md")
	if err != nil {
		return 0, err
	}
	for _, p := range paths {
		body, err := fs.ReadFile(corpus, p)
		if err != nil {
			return 0, err
		}
		name := path.Base(p)
		if _, err := db.UpsertDocument(ctx, "toolmark-docs/"+name, tools.Title(string(body), name), string(body)); err != nil {
			return 0, fmt.Errorf("seeding the demo corpus: %w", err)
		}
	}
	return len(paths), nil
}

// after compacts the conversation's history once it outgrows the budget:
// after a turn completes, never in the middle of one. The demo model
// cannot summarise, so its conversations get a plain extract. The turn's
// input and answer tell whether the budget is near without reading the
// store.
func (a *agent) after(ctx context.Context, in runner.Input, content string) error {
	size := len(in.Summary) + len(in.UserText) + len(content)
	for _, h := range in.History {
		size += len(h.UserText) + len(h.AssistantContent)
	}
	if size <= a.budget {
		return nil
	}
	t := in.Turn
	summary, through, err := a.db.ConversationSummary(ctx, t.ConversationID)
	if err != nil {
		return err
	}
	all, err := a.db.ConversationHistory(ctx, t.ConversationID, "")
	if err != nil {
		return err
	}
	hist := store.HistoryAfter(all, through)
	model := a.model
	if a.demo {
		model = nil
	}
	newSummary, keep, err := simplifiedagent.Compact(ctx, model, summary, hist, a.budget)
	if err != nil || len(keep) == len(hist) {
		return err
	}
	last := hist[len(hist)-len(keep)-1].TurnID
	return a.db.SetConversationSummaryThrough(ctx, t.ConversationID, newSummary, last)
}
