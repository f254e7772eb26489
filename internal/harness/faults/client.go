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
	"github.com/toolmark/toolmark/internal/harness/bench"
)

// user is a client of the API: a token on the cluster's transport.
type user struct {
	c     *cluster
	token string
}

func (s *suite) user(ctx context.Context, name string) (user, error) {
	tok, err := s.cl.newUser(ctx, fmt.Sprintf("%s-%d", name, s.intn(1_000_000)))
	return user{c: s.cl, token: tok}, err
}

// api returns the user's API client for the replica at base.
func (u user) api(base string) *client.Client {
	return client.New(base, client.WithToken(u.token), client.WithHTTPClient(u.c.api))
}

// startTurn creates a conversation on the replica at base and starts a
// turn in it with the given message.
func (u user) startTurn(ctx context.Context, base, content string) (conv, turn string, err error) {
	api := u.api(base)
	c, err := api.CreateConversation(ctx, "faults")
	if err != nil {
		return "", "", err
	}
	ti, err := api.PostTurn(ctx, c.ID, content, "")
	return c.ID, ti.Turn.ID, err
}

// statusOf is the HTTP status of an error answer, 0 for another error.
func statusOf(err error) int {
	var e *client.APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// turnsOf returns the ids of every turn of a conversation, from its
// assistant messages: turns whose POST got no answer are found too.
func (u user) turnsOf(ctx context.Context, base, conv string) ([]string, error) {
	c, err := u.api(base).GetConversation(ctx, conv)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range c.Messages {
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
	seq    bench.SeqCheck
	done   bool // the terminal event arrived
	doneAt time.Time
}

// connect reads one connection to base until the stream ends or ctx is
// done. It returns the answer's status (0 when the request failed).
func (f *follower) connect(ctx context.Context, base string) (int, error) {
	f.mu.Lock()
	after := f.seq.Last()
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
		defer f.mu.Unlock()
		fresh := fr.Seq > f.seq.Last()
		f.seq.Observe(fr.Seq)
		if !fresh {
			return true
		}
		f.frames = append(f.frames, fr)
		if fr.Type.Terminal() {
			f.done, f.doneAt = true, fr.At
		}
		return !fr.Type.Terminal()
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
