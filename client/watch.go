package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
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
	conn, err := c.openStream(ctx, "/api/conversations/"+url.PathEscape(id)+"/events", "watch", "")
	defer conn.close()
	if err != nil {
		return err
	}
	for {
		fr, err := conn.rd.Next()
		if err != nil {
			return conn.named(fmt.Errorf("reading the watch stream: %w", err))
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
