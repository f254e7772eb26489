package demo_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

// TestDemoFailureSaidOnce: a fetch that fails both in the sub-agent's own
// run and in the turn's is reported once, not once quoted from the
// sub-agent's answer and again as the turn's own failure.
func TestDemoFailureSaidOnce(t *testing.T) {
	fetch := tools.NewFetchURL(netip.MustParsePrefix("127.0.0.1/32"))
	model := &demo.Model{}
	url := "http://127.0.0.1:1/notes" // nothing listens on port 1
	res, err := simplifiedagent.Run(context.Background(), simplifiedagent.Request{
		Model: model,
		Input: "Compare resume with cancellation and fetch " + url,
		Tools: []simplifiedagent.Tool{tools.NewSearchDocuments(docs), fetch, simplifiedagent.NewSubagent(model, tools.NewSearchDocuments(docs), fetch)},
	}, (&events{}).emit)
	if err != nil {
		t.Fatal(err)
	}
	said := "I could not fetch " + url
	if n := strings.Count(res.Answer, said); n != 1 {
		t.Errorf("%q said %d times, want once, in %q", said, n, res.Answer)
	}
}
