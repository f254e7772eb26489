package api_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// Streams that park and give their goroutine up (direct_park.go).

// TestTakenOverStreamClientsLeave closes the connections of followers
// parked on turns that are thinking (no event for a while, no keep-alive
// due): each stream ends at once, though no write fails to tell it (the
// goroutine that reads its connection sees the client go), and the server
// holds no stream for them.
func TestTakenOverStreamClientsLeave(t *testing.T) {
	// At this pace the demo thinks for a minute and more before its first
	// token.
	srv := testserver.Start(t, testserver.Options{DemoDelay: 3 * time.Second, Heartbeat: 10 * time.Minute})
	c := newClient(t, srv.URL, "")
	var conns []net.Conn
	var turns []string
	for range 3 {
		turn := c.postTurn(c.newConversation(), twoToolQuestion)
		turns = append(turns, turn.ID)
		for k := range 4 {
			enc := ""
			if k%2 == 1 {
				enc = "gzip"
			}
			_, conn := rawStream(t, srv.URL, turn.ID, enc, 0)
			conns = append(conns, conn)
		}
	}
	lastSeq := func(id string) int64 {
		var tr struct {
			Turn toolmark.Turn `json:"turn"`
		}
		c.mustJSON("GET", "/api/turns/"+id, "", 200, &tr)
		return tr.Turn.LastSeq
	}
	time.Sleep(300 * time.Millisecond) // parked by then
	seqs := map[string]int64{}
	for _, id := range turns {
		seqs[id] = lastSeq(id)
	}
	for _, conn := range conns {
		conn.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(string(c.metrics()), "\ntoolmark_active_streams 0\n") {
		if time.Now().After(deadline) {
			t.Fatal("streams whose clients left are still open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range turns {
		if seq := lastSeq(id); seq != seqs[id] {
			t.Fatalf("turn %s went on from event %d to %d before its streams closed: the test did not test a client leaving while idle", id, seqs[id], seq)
		}
		c.mustJSON("POST", "/api/turns/"+id+"/cancel", "", 202, nil) // no wait at shutdown
	}
}

// TestTakenOverStreamRequestLog follows a turn on a stream that parks and
// lets its handler return: the request's log line comes once, when the
// stream ends, with its status and the bytes it sent.
func TestTakenOverStreamRequestLog(t *testing.T) {
	var logs testserver.Buffer
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	c := newClient(t, srv.URL, "")
	hub := srv.App.Runner.Hub()
	before := hub.DirectStats()
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	resp, _ := rawStream(t, srv.URL, turn.ID, "", 0)
	evs, _, _ := readStream(t, streamBody(t, resp, false))
	checkStream(t, srv, evs)
	if hub.DirectStats().Writes == before.Writes {
		t.Fatal("the stream never parked: the test did not test a handler that returned")
	}
	path := "path=/api/turns/" + turn.ID + "/events"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), path) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the line follows the stream's last bytes
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "msg=request ") && strings.Contains(l, path) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "status=200") || strings.Contains(lines[0], "bytes=0 ") {
		t.Fatalf("the stream's request log: %q, want one line, status 200, its bytes", lines)
	}
}

// TestTakenOverStreamsMixed runs many taken-over streams at once on a few
// turns, with keep-alives due every few milliseconds, so that parks and
// wake-ups of every kind interleave (run with -race): clients that read to
// the end get every event once and in order; clients that leave, at once
// or after a while, are let go; and no stream is left open.
func TestTakenOverStreamsMixed(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond, Heartbeat: 3 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	var turns []string
	for range 4 {
		turns = append(turns, c.postTurn(c.newConversation(), twoToolQuestion).ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			enc := []string{"", "gzip"}[i%2]
			resp, conn, err := dialStream(srv.URL, "/api/turns/"+turns[i%len(turns)]+"/events", enc, 0)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			switch i % 3 {
			case 0: // leaves at once
				conn.Close()
				return
			case 1: // leaves after a while
				time.Sleep(time.Duration(i) * 2 * time.Millisecond)
				conn.Close()
				return
			}
			body := io.Reader(resp.Body)
			if enc != "" {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					errs <- err
					return
				}
				body = zr
			}
			var evs []toolmark.Event
			if _, err := readFrames(body, func(f frame) bool {
				if f.Data != "" {
					var e toolmark.Event
					if err := json.Unmarshal([]byte(f.Data), &e); err != nil {
						errs <- err
						return false
					}
					evs = append(evs, e)
				}
				return true
			}); err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			for k, e := range evs {
				if e.Seq != int64(k+1) {
					errs <- fmt.Errorf("stream %d: event %d has seq %d", i, k, e.Seq)
					return
				}
			}
			if len(evs) == 0 || !evs[len(evs)-1].Type.Terminal() {
				errs <- fmt.Errorf("stream %d: %d events, not to the turn's end", i, len(evs))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(string(c.metrics()), "\ntoolmark_active_streams 0\n") {
		if time.Now().After(deadline) {
			t.Fatal("streams are left open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := srv.App.Runner.Hub().DirectStats(); st.Writes == 0 {
		t.Errorf("%+v: no stream parked", st)
	}
}
