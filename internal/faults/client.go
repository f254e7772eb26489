package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// user is a client of the API: a token and the replica it talks to.
type user struct {
	c     *cluster
	token string
}

func (s *suite) user(ctx context.Context, name string) (user, error) {
	tok, err := s.cl.newUser(ctx, fmt.Sprintf("%s-%d", name, s.intn(1_000_000)))
	return user{c: s.cl, token: tok}, err
}

// call sends a JSON request and decodes a 2xx answer into out.
func (u user) call(ctx context.Context, base, method, path string, in, out any) (int, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, err
		}
	}
	st, b, _, err := u.c.do(ctx, base, u.token, method, path, body)
	if err != nil {
		return st, err
	}
	if st/100 != 2 {
		return st, fmt.Errorf("%s %s: %d %.200s", method, path, st, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return st, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return st, nil
}

func (u user) newConversation(ctx context.Context, base string) (string, error) {
	var out struct {
		Conversation toolmark.Conversation `json:"conversation"`
	}
	_, err := u.call(ctx, base, "POST", "/api/conversations", map[string]string{"title": "faults"}, &out)
	return out.Conversation.ID, err
}

// postTurn starts a turn and returns its id; the status is that of the
// answer (0 when none came).
func (u user) postTurn(ctx context.Context, base, conv, content string) (string, int, error) {
	var out struct {
		Turn toolmark.Turn `json:"turn"`
	}
	st, err := u.call(ctx, base, "POST", "/api/conversations/"+conv+"/turns", map[string]string{"content": content}, &out)
	return out.Turn.ID, st, err
}

// turnState is GET /api/turns/{id}.
type turnState struct {
	Turn      toolmark.Turn             `json:"turn"`
	Content   string                    `json:"content"`
	Seq       int64                     `json:"seq"`
	ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
}

func (u user) turn(ctx context.Context, base, id string) (turnState, error) {
	var out turnState
	_, err := u.call(ctx, base, "GET", "/api/turns/"+id, nil, &out)
	return out, err
}

// turnsOf returns the ids of every turn of a conversation, from its
// assistant messages: turns whose POST got no answer are found too.
func (u user) turnsOf(ctx context.Context, base, conv string) ([]string, error) {
	var out struct {
		Messages []toolmark.Message `json:"messages"`
	}
	if _, err := u.call(ctx, base, "GET", "/api/conversations/"+conv, nil, &out); err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range out.Messages {
		if m.Role == toolmark.RoleAssistant && m.TurnID != "" {
			ids = append(ids, m.TurnID)
		}
	}
	return ids, nil
}

// frame is one event as a follower received it.
type frame struct {
	Seq  int64
	Type toolmark.EventType
	Data string // the SSE data line, byte for byte
	Time time.Time
	At   time.Time // when it was received
}

// openStream opens a turn's event stream after the cursor (Last-Event-ID when
// after > 0).
func (u user) openStream(ctx context.Context, base, turnID string, after int64) (*http.Response, error) {
	h := []string{"Accept", "text/event-stream"}
	if after > 0 {
		h = append(h, "Last-Event-ID", strconv.FormatInt(after, 10))
	}
	return u.c.send(ctx, base, u.token, "GET", "/api/turns/"+turnID+"/events", nil, h)
}

// readFrames reads the event frames of an open stream and hands each to fn
// until the stream ends, fn returns false or ctx is done.
func readFrames(resp *http.Response, fn func(frame) bool) error {
	defer resp.Body.Close()
	r := client.NewReader(resp.Body)
	for {
		f, err := r.Next()
		if err != nil {
			return err
		}
		if f.ID == "" {
			continue // the retry: frame
		}
		seq, err := strconv.ParseInt(f.ID, 10, 64)
		if err != nil {
			return fmt.Errorf("frame id %q: %w", f.ID, err)
		}
		var e toolmark.Event
		_ = json.Unmarshal([]byte(f.Data), &e)
		if !fn(frame{Seq: seq, Type: toolmark.EventType(f.Event), Data: f.Data, Time: e.Time, At: time.Now()}) {
			return nil
		}
	}
}

// log reads a turn's whole event log through the API: until its terminal
// event, or, for a turn that is not final, until upTo or the timeout.
func (u user) log(ctx context.Context, base, turnID string, upTo int64, timeout time.Duration) ([]frame, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := u.openStream(ctx, base, turnID, 0)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("events of %s: status %d", turnID, resp.StatusCode)
	}
	var out []frame
	err = readFrames(resp, func(f frame) bool {
		out = append(out, f)
		return !f.Type.Terminal() && (upTo <= 0 || f.Seq < upTo)
	})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		err = nil // the end of the log, or what it holds so far for a turn that is not final
	}
	return out, err
}

// follower follows one turn's stream across reconnections, as a client
// resuming with Last-Event-ID does, and counts what the protocol forbids:
// an event again (duplicate) or a seq skipped (gap).
type follower struct {
	u      user
	turnID string

	mu     sync.Mutex
	frames []frame // every event, once, in seq order as received
	last   int64
	dups   int
	gaps   int
	conns  int
	done   bool // the terminal event arrived
	doneAt time.Time
}

// connect reads one connection to base until the stream ends, stop returns
// true for a frame, or ctx is done. It returns the answer's status (0 when
// the request failed).
func (f *follower) connect(ctx context.Context, base string, stop func(frame) bool) (int, error) {
	f.mu.Lock()
	after := f.last
	f.conns++
	f.mu.Unlock()
	resp, err := f.u.openStream(ctx, base, f.turnID, after)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return resp.StatusCode, fmt.Errorf("events: status %d", resp.StatusCode)
	}
	err = readFrames(resp, func(fr frame) bool {
		f.mu.Lock()
		switch {
		case fr.Seq <= f.last:
			f.dups++
			f.mu.Unlock()
			return true
		case fr.Seq > f.last+1:
			f.gaps++
		}
		f.last = fr.Seq
		f.frames = append(f.frames, fr)
		if fr.Type.Terminal() {
			f.done, f.doneAt = true, fr.At
		}
		f.mu.Unlock()
		return !fr.Type.Terminal() && (stop == nil || !stop(fr))
	})
	return 200, err
}

func (f *follower) isDone() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

func (f *follower) snapshot() []frame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]frame(nil), f.frames...)
}

// compareWithLog counts the events a follower holds that the log lacks or
// holds differently.
func compareWithLog(got, log []frame) (missing, different int) {
	bySeq := make(map[int64]string, len(log))
	for _, f := range log {
		bySeq[f.Seq] = f.Data
	}
	for _, f := range got {
		d, ok := bySeq[f.Seq]
		switch {
		case !ok:
			missing++
		case d != f.Data:
			different++
		}
	}
	return missing, different
}
