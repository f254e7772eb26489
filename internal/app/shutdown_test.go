package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

func postJSON(t *testing.T, url string, body any, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, raw)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownEndsTurnsAndStreams shuts a server down while a turn runs
// and a client follows it, with a grace shorter than the turn: the turn is
// cancelled and its end written (terminal event and final status together),
// the stream ends with a hint to reconnect at once (to another replica),
// and Serve returns.
func TestShutdownEndsTurnsAndStreams(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 200 * time.Millisecond, Grace: 300 * time.Millisecond})
	var conv struct {
		Conversation toolmark.Conversation `json:"conversation"`
	}
	postJSON(t, srv.URL+"/api/conversations", map[string]string{}, &conv)
	var created struct {
		Turn toolmark.Turn `json:"turn"`
	}
	postJSON(t, srv.URL+"/api/conversations/"+conv.Conversation.ID+"/turns", map[string]string{"content": "How does resume work?"}, &created)
	resp, err := http.Get(srv.URL + "/api/turns/" + created.Turn.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		read <- string(b)
	}()

	start := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Logf("shut down in %v with a grace of 300ms", time.Since(start))
	var stream string
	select {
	case stream = <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream is still open after the server stopped")
	}
	if !strings.Contains(stream, "event: turn_cancelled") && !strings.HasSuffix(strings.TrimSpace(stream), "retry: 100") {
		t.Errorf("the stream ended with neither the turn's end nor a reconnection hint:\n%s", stream)
	}

	ctx := context.Background()
	tu, err := srv.DB.TurnByID(ctx, created.Turn.ID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := srv.DB.EventsAfter(ctx, tu.ID, tu.LastSeq-1, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("last event: %v, %v", evs, err)
	}
	if tu.Status != toolmark.TurnCancelled || evs[0].Type != toolmark.EventTurnCancelled {
		t.Errorf("after shutdown the turn is %s with last event %s; want cancelled with turn_cancelled", tu.Status, evs[0].Type)
	}
}
