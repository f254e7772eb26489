package app

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
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
	models    map[string]builtModel // by id
	infos     toolmark.Models
	defaultID string
	retry     simplifiedagent.RetryPolicy
	log       *slog.Logger
	tools     []simplifiedagent.Tool
	name      string // the default model's name
	demo      bool   // some model is the demo model
	db        *store.DB
	budget    int
	mcp       *mcptools.Manager
	sub       *simplifiedagent.Subagent
	base      []simplifiedagent.Tool // what a sub-agent gets besides the MCP tools
}

// builtModel is one model ready to answer.
type builtModel struct {
	llm  llms.Model
	name string
	demo bool
}

func newAgent(cfg Config, db *store.DB) (*agent, error) {
	a := &agent{db: db, budget: cfg.ContextChar, retry: cfg.Model.Retry, log: cfg.Logger, models: map[string]builtModel{}}
	if a.budget <= 0 {
		a.budget = 48_000
	}
	list := cfg.Models
	if len(list) == 0 {
		list = []ModelConfig{cfg.Model}
	}
	list = slices.Clone(list)
	for i := range list {
		m, err := buildModel(list[i], cfg.Model)
		if err != nil {
			return nil, err
		}
		list[i].ID = cmp.Or(list[i].ID, m.name, "default")
		list[i].Label = cmp.Or(list[i].Label, list[i].ID)
		list[i].Provider = cmp.Or(strings.ToLower(list[i].Provider), "demo")
		if len(cfg.Models) == 0 { // one model from the environment: what it takes follows from its provider
			list[i].Images, list[i].Documents = toolmark.AcceptsOf(list[i].Provider)
		}
		if _, dup := a.models[list[i].ID]; dup {
			return nil, fmt.Errorf("model %q is listed twice; give each model its own id", list[i].ID)
		}
		a.models[list[i].ID], a.demo = m, a.demo || m.demo
		if list[i].Default && a.defaultID == "" {
			a.defaultID = list[i].ID
		}
	}
	a.defaultID = cmp.Or(a.defaultID, list[0].ID)
	a.infos, a.name = modelInfos(list, a.defaultID), a.models[a.defaultID].name
	base := []simplifiedagent.Tool{tools.NewSearchDocuments(db), tools.NewFetchURL(cfg.FetchAllow...)}
	if cfg.SearxNGURL != "" {
		base = append(base, tools.NewWebSearch(cfg.SearxNGURL))
	}
	a.base, a.sub = base, simplifiedagent.NewSubagent(a.models[a.defaultID].llm)
	a.tools = append(append([]simplifiedagent.Tool{}, base...), simplifiedagent.NewTodoList())
	a.mcp = mcptools.New(cfg.MCP, mcptools.Options{Logger: cfg.Logger, ClientVersion: Version})
	return a, nil
}

// buildModel makes the model m configures; knobs gives the demo model's
// pace and load.
func buildModel(m, knobs ModelConfig) (builtModel, error) {
	var b builtModel
	var err error
	switch strings.ToLower(m.Provider) {
	case "", "demo":
		dm := demo.New()
		dm.Config = knobs.Demo
		switch {
		case knobs.DemoDelay < 0:
			dm.Delay = 0
		case knobs.DemoDelay > 0:
			dm.Delay = knobs.DemoDelay
		}
		return builtModel{llm: dm, name: "demo", demo: true}, nil
	case "openai":
		b.llm, err = simplifiedagent.NewOpenAI(m.BaseURL, m.APIKey, m.Name)
	case "azure":
		b.llm, err = simplifiedagent.NewAzureOpenAI(m.BaseURL, m.APIKey, m.Name, m.APIVersion)
	case "anthropic":
		b.llm, err = simplifiedagent.NewAnthropic(m.BaseURL, m.APIKey, m.Name)
	case "mistral":
		b.llm, err = simplifiedagent.NewMistral(m.BaseURL, m.APIKey, m.Name)
	default:
		return b, toolmark.Errorf(toolmark.EINVALID, "unknown model provider %q: use demo, openai, azure, anthropic or mistral", m.Provider)
	}
	if err != nil {
		return b, fmt.Errorf("configuring the %s model %s: %w", m.Provider, cmp.Or(m.ID, m.Name), err)
	}
	b.name = m.Name
	return b, nil
}

// model returns the model of a turn: the one it names, else the default
// (a model no longer offered is answered by the default).
func (a *agent) model(id string) builtModel {
	if m, ok := a.models[id]; ok {
		return m
	}
	return a.models[a.defaultID]
}

// toolsNow returns the tools of a turn: the built-in ones, the sub-agent
// (with the built-in search tools and the MCP tools) and the MCP servers'
// tools as they now stand.
func (a *agent) toolsNow(model llms.Model) []simplifiedagent.Tool {
	names := []string{a.sub.Name()}
	for _, t := range a.tools {
		names = append(names, t.Name())
	}
	mcp := a.mcp.AgentTools(names...)
	sub := *a.sub
	sub.Model = model
	sub.Tools = append(append([]simplifiedagent.Tool{}, a.base...), mcp...)
	out := append(append([]simplifiedagent.Tool{}, a.tools...), &sub)
	return append(out, mcp...)
}

// catalog lists the tools a turn gets and the MCP servers' states
// (GET /api/tools).
func (a *agent) catalog() api.Tools {
	var out api.Tools
	var builtin []string
	for _, t := range a.toolsNow(a.model("").llm) {
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
	model := a.model(in.Turn.Model).llm
	info, ok := a.infos.Find(in.Turn.Model)
	if !ok {
		info = a.infos.Default()
	}
	if err := a.historyFiles(ctx, in.History, files, info.Documents); err != nil {
		return err
	}
	req := simplifiedagent.Request{
		Model:       model,
		History:     simplifiedagent.BuildHistory(in.Summary, in.History),
		Input:       in.UserText,
		Attachments: files,
		Documents:   info.Documents,
		Tools:       a.toolsNow(model),
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

// historyFiles gives the earlier questions of hist their files, as many as
// fit in the attachment budget beside the question's own (see
// simplifiedagent.HistoryFiles): two queries, the second only for bytes
// that go.
func (a *agent) historyFiles(ctx context.Context, hist []toolmark.HistoryTurn, current []toolmark.Upload, documents bool) error {
	ids := make([]string, len(hist))
	for i, h := range hist {
		ids[i] = h.TurnID
	}
	atts, err := a.db.TurnAttachments(ctx, ids)
	if err != nil || len(atts) == 0 {
		return err
	}
	for i := range hist {
		hist[i].Attachments = atts[hist[i].TurnID]
	}
	load := simplifiedagent.HistoryFiles(hist, current, 0, documents)
	ids = ids[:0]
	for _, u := range load {
		ids = append(ids, u.ID)
	}
	data, err := a.db.UploadBytes(ctx, ids)
	for _, u := range load {
		u.Data = data[u.ID]
	}
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
	var model llms.Model
	if m := a.model(t.Model); !m.demo {
		model = m.llm
	}
	newSummary, keep, err := simplifiedagent.Compact(ctx, model, summary, hist, a.budget)
	if err != nil || len(keep) == len(hist) {
		return err
	}
	last := hist[len(hist)-len(keep)-1].TurnID
	return a.db.SetConversationSummaryThrough(ctx, t.ConversationID, newSummary, last)
}
