package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// WebSearch is the web_search tool over a SearxNG server's JSON API
// (GET {BaseURL}/search?q=…&format=json; the server must enable the json
// format).
type WebSearch struct {
	BaseURL string
	Client  *http.Client // default: a client with a 15 s timeout
	Limit   int          // results returned; default 5
	Logger  *slog.Logger // where failures are logged in full; default slog.Default()
}

// NewWebSearch returns the web_search tool for the SearxNG server at
// baseURL.
func NewWebSearch(baseURL string) *WebSearch {
	return &WebSearch{BaseURL: strings.TrimRight(baseURL, "/"), Limit: 5}
}

// Name implements tools.Tool.
func (*WebSearch) Name() string { return "web_search" }

// Description implements tools.Tool.
func (*WebSearch) Description() string {
	return "Search the web. Returns numbered results with title, URL and a snippet."
}

// Parameters returns the JSON schema of the arguments.
func (*WebSearch) Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "the search query"},
		},
		"required": []string{"query"},
	}
}

// TagAttrs shows the query on the tag.
func (*WebSearch) TagAttrs(args map[string]any) []toolcallmarkup.Attr {
	if q := stringArg(args, "query"); q != "" {
		return []toolcallmarkup.Attr{{Key: "query", Value: q}}
	}
	return nil
}

// ResultAttrs adds the number of results.
func (*WebSearch) ResultAttrs(result string) []toolcallmarkup.Attr { return countAttr(result) }

type searxResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Call implements tools.Tool.
func (t *WebSearch) Call(ctx context.Context, input string) (string, error) {
	var args struct {
		Query string `json:"query"`
	}
	if err := decodeArgs(input, &args, &args.Query); err != nil {
		return "", fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	q := strings.TrimSpace(args.Query)
	if q == "" {
		return "", errors.New("the query is empty")
	}
	if t.BaseURL == "" {
		return "", errors.New("no web search service is configured")
	}
	u := t.BaseURL + "/search?" + url.Values{"q": {q}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", failure(t.Logger, t.Name(), "the web search service is misconfigured", err)
	}
	req.Header.Set("Accept", "application/json")
	client := t.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		msg := "the web search service could not be reached"
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			msg = "the web search service did not answer in time"
		}
		return "", failure(t.Logger, t.Name(), msg, err, "query", q)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", failure(t.Logger, t.Name(), statusMessage("the web search service", resp.StatusCode),
			fmt.Errorf("SearxNG answered HTTP %d", resp.StatusCode), "query", q)
	}
	var sr searxResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&sr); err != nil {
		return "", failure(t.Logger, t.Name(), "the web search service sent an answer that could not be read",
			fmt.Errorf("decoding the SearxNG answer: %w", err), "query", q)
	}
	limit := t.Limit
	if limit <= 0 {
		limit = 5
	}
	res := sr.Results[:min(limit, len(sr.Results))]
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d results for %q.\n", len(res), q)
	for i, r := range res {
		fmt.Fprintf(&b, "\n[%d] %s (%s)\n%s\n", i+1, oneLine(r.Title), r.URL, oneLine(r.Content))
	}
	return b.String(), nil
}
