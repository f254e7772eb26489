package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
	"github.com/toolmark/toolmark/turnstate"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// frame is one SSE frame as read off the wire.
type frame struct {
	ID, Event, Data string
	Retry           string
}

// readFrames reads SSE frames until EOF or until fn returns false. Comment
// lines are counted in comments.
func readFrames(r io.Reader, fn func(frame) bool) (comments int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var f frame
	seen := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if seen && !fn(f) {
				return comments, nil
			}
			f, seen = frame{}, false
		case strings.HasPrefix(line, ":"):
			comments++
		default:
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			seen = true
			switch k {
			case "id":
				f.ID = v
			case "event":
				f.Event = v
			case "data":
				if f.Data != "" {
					f.Data += "\n"
				}
				f.Data += v
			case "retry":
				f.Retry = v
			}
		}
	}
	return comments, sc.Err()
}

// events decodes the event frames (retry-only frames are skipped).
func mustEvent(tb testing.TB, f frame) toolmark.Event {
	tb.Helper()
	var e toolmark.Event
	if err := json.Unmarshal([]byte(f.Data), &e); err != nil {
		tb.Fatalf("frame %q: %v", f.Data, err)
	}
	if f.ID == "" || f.Event != string(e.Type) {
		tb.Fatalf("frame id %q event %q does not match data type %q", f.ID, f.Event, e.Type)
	}
	return e
}

// client sends requests with an optional bearer token.
type client struct {
	tb    testing.TB
	base  string
	token string
	http  *http.Client
}

func newClient(tb testing.TB, base, token string) *client {
	return &client{tb: tb, base: base, token: token, http: &http.Client{Timeout: 60 * time.Second}}
}

// do sends a request; body is sent as JSON unless headers say otherwise.
func (c *client) do(method, path, body string, headers ...string) (int, http.Header, []byte) {
	c.tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.tb.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// mustJSON sends a request, checks the status and decodes the body.
func (c *client) mustJSON(method, path, body string, want int, out any) {
	c.tb.Helper()
	st, _, b := c.do(method, path, body)
	if st != want {
		c.tb.Fatalf("%s %s: got status %d, want %d: %s", method, path, st, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.tb.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
}

// stream opens the event stream of a turn after a cursor (-1: none), with
// headers given as name, value pairs.
func (c *client) stream(ctx context.Context, turnID string, lastEventID int64, headers ...string) *http.Response {
	c.tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/turns/"+turnID+"/events", nil)
	if lastEventID >= 0 {
		req.Header.Set("Last-Event-ID", itoa(lastEventID))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		c.tb.Fatalf("opening the stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.tb.Fatalf("stream: got status %d: %s", resp.StatusCode, b)
	}
	return resp
}

// allEvents reads a turn's whole stream after the cursor, to the end.
func (c *client) allEvents(turnID string, after int64) []toolmark.Event {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp := c.stream(ctx, turnID, after)
	defer resp.Body.Close()
	var evs []toolmark.Event
	if _, err := readFrames(resp.Body, func(f frame) bool {
		if f.Data != "" {
			evs = append(evs, mustEvent(c.tb, f))
		}
		return true
	}); err != nil {
		c.tb.Fatalf("reading the stream: %v", err)
	}
	return evs
}

type turnResp struct {
	Turn      toolmark.Turn `json:"turn"`
	EventsURL string        `json:"eventsUrl"`
}

// newConversation creates a conversation and returns its id.
func (c *client) newConversation() string {
	c.tb.Helper()
	var out struct {
		Conversation toolmark.Conversation `json:"conversation"`
	}
	c.mustJSON(http.MethodPost, "/api/conversations", `{"title":"test"}`, http.StatusCreated, &out)
	return out.Conversation.ID
}

// postTurn starts a turn.
func (c *client) postTurn(convID, content string) toolmark.Turn {
	c.tb.Helper()
	body, _ := json.Marshal(map[string]string{"content": content})
	var out turnResp
	c.mustJSON(http.MethodPost, "/api/conversations/"+convID+"/turns", string(body), http.StatusAccepted, &out)
	return out.Turn
}

func itoa(n int64) string { return strings.TrimSpace(string(must(json.Marshal(n)))) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func eventsEqual(a, b []toolmark.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].Type != b[i].Type || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// replayLog rebuilds a message's content from its whole event log, as the
// crash sweep and the clients do.
func replayLog(evs []toolmark.Event) (string, error) {
	st := turnstate.New()
	for _, e := range evs {
		if err := st.ApplyEvent(e); err != nil {
			return "", err
		}
	}
	return st.Content(), nil
}

// metrics returns the server's /metrics page.
func (c *client) metrics() []byte {
	c.tb.Helper()
	st, _, b := c.do(http.MethodGet, "/metrics", "")
	if st != http.StatusOK {
		c.tb.Fatalf("/metrics: status %d", st)
	}
	return b
}
