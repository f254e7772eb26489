package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func chat(t *testing.T, base, convID, content string) (string, toolmark.Turn) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"conversationId": convID, "content": content})
	resp, err := http.Post(base+"/api/chat", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ConversationID string        `json:"conversationId"`
		Turn           toolmark.Turn `json:"turn"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("chat: status %d", resp.StatusCode)
	}
	if out.Turn.Status != toolmark.TurnCompleted {
		t.Fatalf("turn %s", out.Turn.Status)
	}
	return out.ConversationID, out.Turn
}

// TestCompaction runs turns in one conversation with a small history
// budget: once the history outgrows it, the oldest turns are folded into
// the conversation's summary after a turn completes, and later turns still
// run with the summary and the newest turns.
func TestCompaction(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{ContextChars: 1500})
	ctx := context.Background()
	conv, first := chat(t, srv.URL, "", "How does resume work?")
	summary, through, err := srv.DB.ConversationSummary(ctx, conv)
	if err != nil || summary != "" || through != "" {
		t.Fatalf("after one turn: summary %q through %q err %v; want none", summary, through, err)
	}
	chat(t, srv.URL, conv, "What happens on cancellation?")
	chat(t, srv.URL, conv, "How does crash recovery work?")
	// Compaction runs after the turn has ended, so the client may be first.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		summary, through, err = srv.DB.ConversationSummary(ctx, conv)
		if err != nil {
			t.Fatal(err)
		}
		if summary != "" || time.Now().After(deadline) {
			break
		}
	}
	if summary == "" || through == "" {
		t.Fatalf("after three turns over the budget: no summary (through %q)", through)
	}
	if through != first.ID {
		hist, _ := srv.DB.ConversationHistory(ctx, conv, "")
		if len(hist) == 0 || hist[len(hist)-1].TurnID == through {
			t.Fatalf("the summary covers the newest turn too")
		}
	}
	if strings.Contains(summary, "<ToolCall") {
		t.Errorf("summary holds raw markup: %q", summary)
	}
	chat(t, srv.URL, conv, "And the markup format?")
}

func TestCheckListenAddr(t *testing.T) {
	for _, tt := range []struct {
		auth, addr string
		ok         bool
	}{
		{"local", "127.0.0.1:8080", true},
		{"local", "localhost:0", true},
		{"local", "[::1]:80", true},
		{"local", "0.0.0.0:8080", false},
		{"local", ":8080", false},
		{"local", "10.1.2.3:8080", false},
		{"token", "0.0.0.0:8080", true},
		{"local", "nonsense", false},
	} {
		err := app.CheckListenAddr(tt.auth, tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListenAddr(%q, %q) = %v, want ok=%v", tt.auth, tt.addr, err, tt.ok)
		}
	}
}
