package client

import (
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/toolmark/toolmark"
)

// ConversationList is a page of conversations, most recently updated
// first; Next, when not "", is the cursor of the following page.
type ConversationList struct {
	Conversations []toolmark.Conversation `json:"conversations"`
	Next          string                  `json:"next,omitempty"`
}

// ListConversationsPage returns up to limit conversations (0: the server's
// default) after the cursor after ("" for the first page); with query set,
// those whose title or messages hold it, each with a snippet.
func (c *Client) ListConversationsPage(ctx context.Context, query, after string, limit int) (ConversationList, error) {
	q := url.Values{}
	if query != "" {
		q.Set("q", query)
	}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/api/conversations"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out ConversationList
	err := c.do(ctx, http.MethodGet, path, nil, nil, &out)
	return out, err
}

// SearchConversations returns the conversations whose title or messages
// hold query (the first page).
func (c *Client) SearchConversations(ctx context.Context, query string) ([]toolmark.Conversation, error) {
	l, err := c.ListConversationsPage(ctx, query, "", 0)
	return l.Conversations, err
}

// RenameConversation sets a conversation's title.
func (c *Client) RenameConversation(ctx context.Context, id, title string) (toolmark.Conversation, error) {
	var out struct {
		Conversation toolmark.Conversation `json:"conversation"`
	}
	err := c.do(ctx, http.MethodPatch, "/api/conversations/"+url.PathEscape(id), map[string]string{"title": title}, nil, &out)
	return out.Conversation, err
}

// RetryTurn answers the question of a failed, stopped or interrupted turn
// again, in place of that turn (and what followed it); RegenerateTurn does
// the same for any finished turn. idempotencyKey may be "".
func (c *Client) RetryTurn(ctx context.Context, turnID, idempotencyKey string) (TurnInfo, error) {
	return c.again(ctx, "/api/turns/"+url.PathEscape(turnID)+"/retry", nil, idempotencyKey)
}

// RegenerateTurn answers the question of a finished turn again.
func (c *Client) RegenerateTurn(ctx context.Context, turnID, idempotencyKey string) (TurnInfo, error) {
	return c.again(ctx, "/api/turns/"+url.PathEscape(turnID)+"/regenerate", nil, idempotencyKey)
}

// EditMessage asks content in place of a question of the conversation
// (and of everything after it).
func (c *Client) EditMessage(ctx context.Context, messageID, content, idempotencyKey string) (TurnInfo, error) {
	return c.again(ctx, "/api/messages/"+url.PathEscape(messageID)+"/edit", map[string]string{"content": content}, idempotencyKey)
}

// SelectVersion makes a version of a question (one of a Message's
// Versions) the conversation's version in its place: the conversation's
// branch follows it (POST /api/messages/{id}/select).
func (c *Client) SelectVersion(ctx context.Context, messageID string) (toolmark.Message, error) {
	var out struct {
		Message toolmark.Message `json:"message"`
	}
	err := c.do(ctx, http.MethodPost, "/api/messages/"+url.PathEscape(messageID)+"/select", struct{}{}, nil, &out)
	return out.Message, err
}

// RegenerateTurnOn answers the question of a finished turn again with
// model (an id of Models; "" for the conversation's model).
func (c *Client) RegenerateTurnOn(ctx context.Context, turnID, model, idempotencyKey string) (TurnInfo, error) {
	return c.again(ctx, "/api/turns/"+url.PathEscape(turnID)+"/regenerate", modelBody(model), idempotencyKey)
}

// RetryTurnOn answers the question of a failed, stopped or interrupted
// turn again with model (an id of Models; "" for the conversation's model).
func (c *Client) RetryTurnOn(ctx context.Context, turnID, model, idempotencyKey string) (TurnInfo, error) {
	return c.again(ctx, "/api/turns/"+url.PathEscape(turnID)+"/retry", modelBody(model), idempotencyKey)
}

// modelBody is the body of a retry or a regeneration naming model.
func modelBody(model string) any {
	if model == "" {
		return nil
	}
	return map[string]string{"model": model}
}

func (c *Client) again(ctx context.Context, path string, in any, key string) (TurnInfo, error) {
	var h http.Header
	if key != "" {
		h = http.Header{"Idempotency-Key": {key}}
	}
	if in == nil {
		in = struct{}{}
	}
	var out TurnInfo
	err := c.do(ctx, http.MethodPost, path, in, h, &out)
	return out, err
}

// ReplacedMessages returns the earlier versions of a conversation's
// messages: those retries, regenerations and edits replaced.
func (c *Client) ReplacedMessages(ctx context.Context, conversationID string) ([]Message, error) {
	var out struct {
		Messages []Message `json:"messages"`
	}
	err := c.do(ctx, http.MethodGet, "/api/conversations/"+url.PathEscape(conversationID)+"/replaced", nil, nil, &out)
	return out.Messages, err
}

// ExportConversation returns a whole conversation as Markdown (format
// "markdown") or JSON ("json"), with the file name the server gives it
// (made of its title; "" when it gives none).
func (c *Client) ExportConversation(ctx context.Context, conversationID, format string) (body []byte, fileName string, err error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/api/conversations/"+url.PathEscape(conversationID)+"/export?format="+url.QueryEscape(format), nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, "", decodeError(resp)
	}
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
		fileName = filepath.Base(params["filename"]) // never a path the server chose
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	return body, fileName, err
}

// Tools is what GET /api/tools answers: the tools the agent offers and the
// state of every MCP server.
type Tools struct {
	Tools []struct {
		Name        string `json:"name"`
		Server      string `json:"server"` // "" for a built-in tool
		Tool        string `json:"tool"`
		Description string `json:"description"`
	} `json:"tools"`
	Servers []struct {
		Name      string   `json:"name"`
		Transport string   `json:"transport"`
		Status    string   `json:"status"` // connected, connecting or failed
		Error     string   `json:"error,omitempty"`
		Tools     []string `json:"tools"`
	} `json:"servers"`
}

// Models lists the models a turn may name, and the default's id.
func (c *Client) Models(ctx context.Context) (models toolmark.Models, defaultID string, err error) {
	var out struct {
		Models  toolmark.Models `json:"models"`
		Default string          `json:"default"`
	}
	err = c.do(ctx, http.MethodGet, "/api/models", nil, nil, &out)
	return out.Models, out.Default, err
}

// ListTools lists the tools the agent offers and its MCP servers' states.
func (c *Client) ListTools(ctx context.Context) (Tools, error) {
	var out Tools
	err := c.do(ctx, http.MethodGet, "/api/tools", nil, nil, &out)
	return out, err
}
