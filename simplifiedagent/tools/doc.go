// Package tools holds the tools toolmark's agent offers the model:
// search_documents over the knowledge base, web_search over a SearxNG
// server and fetch_url for the readable text of a web page, plus Ingest,
// which loads markdown and text files into the knowledge base.
//
// Each tool implements the langchaingo tools.Tool methods and the optional
// interfaces of package simplifiedagent: Parameters (its JSON schema),
// TagAttrs (the attributes its tag shows while the arguments stream) and
// ResultAttrs (those it adds on success).
package tools

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

// stringArg returns args[key] when it is a string.
func stringArg(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

// decodeArgs decodes a tool's JSON input into v; input that is not a JSON
// object is taken as the value of fallback.
func decodeArgs(input string, v any, fallback *string) error {
	in := strings.TrimSpace(input)
	if strings.HasPrefix(in, "{") {
		return json.Unmarshal([]byte(in), v)
	}
	if fallback != nil {
		*fallback = in
	}
	return nil
}

// countAttr returns the count attribute from a result that starts with
// "Found N ".
func countAttr(result string) []toolcallmarkup.Attr {
	rest, ok := strings.CutPrefix(result, "Found ")
	if !ok {
		return nil
	}
	n, _, _ := strings.Cut(rest, " ")
	if _, err := strconv.Atoi(n); err != nil {
		return nil
	}
	return []toolcallmarkup.Attr{{Key: "count", Value: n}}
}
