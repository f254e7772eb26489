package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
)

// WatchConversation follows conversation id's watch stream
// (GET /api/conversations/{id}/events) and calls fn with the id of each
// turn that starts in it, whoever started it, the turn being answered
// first when there is one. A lost connection is made again (1 s to 10 s
// apart); a turn that starts meanwhile is told on reconnecting only if it
// is still being answered. It returns when ctx ends (nil) or on an error
// answer of the server (404 for a conversation that is not the user's).
func (c *Client) WatchConversation(ctx context.Context, id string, fn func(turnID string)) error {
	wait := time.Second
	for {
		err := c.watchOnce(ctx, id, fn)
		var apiErr *APIError
		if ctx.Err() != nil {
			return nil
		}
		if errors.As(err, &apiErr) && apiErr.Status < 500 {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Second)
	}
}

// watchOnce makes one connection to the watch stream and delivers its
// turns until it ends.
func (c *Client) watchOnce(ctx context.Context, id string, fn func(turnID string)) error {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := "/api/conversations/" + url.PathEscape(id) + "/events"
	req, err := c.newRequest(actx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	var idle idleTimer
	idle.start(c.idleTimeout, cancel)
	defer idle.stop()
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return decodeError(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return &APIError{Status: resp.StatusCode, Code: toolmark.EINTERNAL, Message: "watch answer has content type " + ct}
	}
	rd := NewReader(&idleReader{r: resp.Body, t: &idle})
	for {
		fr, err := rd.Next()
		if err != nil {
			return fmt.Errorf("reading the watch stream: %w", err)
		}
		var t struct {
			ConversationID string `json:"conversationId"`
			TurnID         string `json:"turnId"`
		}
		if fr.Event == "turn" && json.Unmarshal([]byte(fr.Data), &t) == nil && t.TurnID != "" && t.ConversationID == id {
			fn(t.TurnID)
		}
	}
}
