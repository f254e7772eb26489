package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Searcher runs a ranked full-text search over the knowledge base. The
// store implements it.
type Searcher interface {
	SearchDocuments(ctx context.Context, query string, limit int) ([]toolmark.DocumentHit, error)
}

// SearchDocuments is the search_documents tool.
type SearchDocuments struct {
	Searcher Searcher
	Limit    int          // hits per search; default 5, at most 20
	Logger   *slog.Logger // where failures are logged in full; default slog.Default()
}

// Counter counts the documents of the knowledge base. A Searcher that
// implements it lets search_documents tell the model how to load documents
// when there are none.
type Counter interface {
	CountDocuments(ctx context.Context) (int, error)
}

// EmptyHint is what search_documents adds to a search that found nothing
// in an empty knowledge base.
const EmptyHint = "The knowledge base is empty: documents are loaded with `toolmark ingest DIR` (Markdown and text files)."

// NewSearchDocuments returns the search_documents tool over s.
func NewSearchDocuments(s Searcher) *SearchDocuments {
	return &SearchDocuments{Searcher: s, Limit: 5}
}

// Name implements tools.Tool.
func (*SearchDocuments) Name() string { return "search_documents" }

// Description implements tools.Tool.
func (*SearchDocuments) Description() string {
	return "Search the knowledge base (toolmark's documentation) with full-text search. " +
		"Returns numbered hits with title, source and a snippet; cite them as [1], [2]."
}

// Parameters returns the JSON schema of the arguments.
func (*SearchDocuments) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "keywords to search for"},
			"limit": map[string]any{"type": "integer", "description": "number of hits (1-20)"},
		},
		"required": []string{"query"},
	}
}

// TagAttrs shows the query on the tag while it streams.
func (*SearchDocuments) TagAttrs(args map[string]any) []toolcallmarkup.Attr {
	if q := stringArg(args, "query"); q != "" {
		return []toolcallmarkup.Attr{{Key: "query", Value: q}}
	}
	return nil
}

// ResultAttrs adds the number of hits.
func (*SearchDocuments) ResultAttrs(result string) []toolcallmarkup.Attr { return countAttr(result) }

// Call implements tools.Tool. input is {"query": "...", "limit": n} or a
// plain query.
func (t *SearchDocuments) Call(ctx context.Context, input string) (string, error) {
	var args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(input, &args, &args.Query); err != nil {
		return "", fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	args.Query = strings.TrimSpace(args.Query)
	if args.Query == "" {
		return "", errors.New("the query is empty")
	}
	if t.Searcher == nil {
		return "", errors.New("no knowledge base is configured")
	}
	limit := args.Limit
	if limit <= 0 {
		limit = t.Limit
	}
	limit = min(max(limit, 1), 20)
	hits, err := t.Searcher.SearchDocuments(ctx, args.Query, limit)
	if err != nil {
		return "", failure(t.Logger, t.Name(), "the knowledge base could not be searched", err, "query", args.Query)
	}
	out := FormatHits(args.Query, hits)
	if c, ok := t.Searcher.(Counter); ok && len(hits) == 0 {
		if n, err := c.CountDocuments(ctx); err == nil && n == 0 {
			out += "\n" + EmptyHint + "\n"
		}
	}
	return out, nil
}

// FormatHits writes hits as the text the model receives: a "Found N"
// line, then numbered entries with title, source and snippet.
func FormatHits(query string, hits []toolmark.DocumentHit) string {
	var b strings.Builder
	noun := "documents"
	if len(hits) == 1 {
		noun = "document"
	}
	fmt.Fprintf(&b, "Found %d %s for %q.\n", len(hits), noun, query)
	for i, h := range hits {
		fmt.Fprintf(&b, "\n[%d] %s (%s)\n%s\n", i+1, oneLine(h.Title), h.Source, oneLine(h.Snippet))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
