package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolmark/toolmark"
)

// Client calls one toolmark server. It is safe for concurrent use.
type Client struct {
	base        string // without a trailing slash
	token       string
	hc          *http.Client
	maxRetries  int
	maxBackoff  time.Duration
	idleTimeout time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends "Authorization: Bearer token" with every request, as a
// server in token auth mode requires.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient makes the Client use hc instead of a default http.Client.
// Follow needs hc to have no overall Timeout, since a stream lasts as long
// as its turn.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetries sets how many reconnections in a row without receiving an
// event Follow makes before it gives up (default 10).
func WithRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithMaxBackoff caps the wait between two reconnections (default 30 s).
func WithMaxBackoff(d time.Duration) Option { return func(c *Client) { c.maxBackoff = d } }

// WithIdleTimeout sets how long Follow waits without receiving a byte
// (events or the server's keep-alive comments, sent every 15 s) before it
// takes the connection for dead and reconnects (default 45 s).
func WithIdleTimeout(d time.Duration) Option { return func(c *Client) { c.idleTimeout = d } }

// New returns a Client for the server at baseURL, such as
// "http://127.0.0.1:8080".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		base:        strings.TrimRight(baseURL, "/"),
		hc:          &http.Client{},
		maxRetries:  10,
		maxBackoff:  30 * time.Second,
		idleTimeout: 45 * time.Second,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// APIError is an error answer of the server: its HTTP status and the code
// and message of its JSON error body.
type APIError struct {
	Status  int
	Code    string // one of the toolmark.E* codes
	Message string
}

// Error implements the error interface.
func (e *APIError) Error() string {
	return fmt.Sprintf("toolmark: %d %s: %s", e.Status, e.Code, e.Message)
}

// ErrorCode returns the code of the *APIError in err's chain, or "" when
// there is none.
func ErrorCode(err error) string {
	var e *APIError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Info describes the server: GET /api/info.
type Info struct {
	Model   string `json:"model"`
	Demo    bool   `json:"demo"`
	Auth    string `json:"auth"` // "local" or "token"
	Version string `json:"version"`
}

// Message is a message as the server returns it: the stored markup content
// plus its server-rendered, sanitised HTML, tool calls and todos.
type Message struct {
	toolmark.Message
	HTML      string                    `json:"html"`
	ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
	Todos     []toolmark.Todo           `json:"todos"`
	Usage     *toolmark.Usage           `json:"usage,omitempty"` // the answer's tokens, once its turn ended
	Model     string                    `json:"model,omitempty"` // the id of the model that wrote an answer
	// Versions are, for a question asked again (edited, regenerated,
	// retried), the ids of every question asked in its place, oldest first,
	// itself among them (SelectVersion switches to one).
	Versions []string `json:"versions,omitempty"`
	// Attachments are, for a question, the files attached to it (no bytes;
	// URL is where their owner reads them).
	Attachments []toolmark.Upload `json:"attachments,omitempty"`
	// Error is, for an answer whose turn failed, the sentence its end
	// carried (what happened and what to do).
	Error string `json:"error,omitempty"`
}

// ConversationPage is a conversation with a page of its messages (the
// latest, oldest first) and its active turn, if one runs: GET
// /api/conversations/{id}. More is true when older messages come before
// them: GetConversationBefore(ctx, id, Before, n) returns those.
type ConversationPage struct {
	Conversation toolmark.Conversation `json:"conversation"`
	Messages     []Message             `json:"messages"`
	ActiveTurn   *toolmark.Turn        `json:"activeTurn"`
	More         bool                  `json:"more"`
	Before       int64                 `json:"before,omitempty"`
}

// TurnInfo is the answer to a new turn: the turn and the URL of its events.
type TurnInfo struct {
	Turn      toolmark.Turn `json:"turn"`
	EventsURL string        `json:"eventsUrl"`
}

// TurnState is the state of a turn for clients that poll: GET /api/turns/{id}.
type TurnState struct {
	Turn      toolmark.Turn             `json:"turn"`
	Content   string                    `json:"content"`
	HTML      string                    `json:"html"`
	Seq       int64                     `json:"seq"`
	ToolCalls []toolmark.ToolCallRecord `json:"toolCalls"`
	Todos     []toolmark.Todo           `json:"todos"`
}

// ChatResult is the answer of POST /api/chat: the finished turn and its
// assistant message.
type ChatResult struct {
	ConversationID string        `json:"conversationId"`
	Turn           toolmark.Turn `json:"turn"`
	Message        Message       `json:"message"`
}

// Info returns what the server says about itself.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var out Info
	err := c.do(ctx, http.MethodGet, "/api/info", nil, nil, &out)
	return out, err
}

// CreateConversation creates a conversation; title may be empty.
func (c *Client) CreateConversation(ctx context.Context, title string) (toolmark.Conversation, error) {
	var out struct {
		Conversation toolmark.Conversation `json:"conversation"`
	}
	var body any = struct{}{}
	if title != "" {
		body = map[string]string{"title": title}
	}
	err := c.do(ctx, http.MethodPost, "/api/conversations", body, nil, &out)
	return out.Conversation, err
}

// ListConversations returns the caller's conversations, newest first.
func (c *Client) ListConversations(ctx context.Context) ([]toolmark.Conversation, error) {
	var out struct {
		Conversations []toolmark.Conversation `json:"conversations"`
	}
	err := c.do(ctx, http.MethodGet, "/api/conversations", nil, nil, &out)
	return out.Conversations, err
}

// GetConversation returns a conversation with its latest messages (the
// server's default page).
func (c *Client) GetConversation(ctx context.Context, id string) (ConversationPage, error) {
	return c.GetConversationBefore(ctx, id, 0, 0)
}

// GetConversationBefore returns a conversation with up to limit of its
// messages (0: the server's default) before the position before (0: the
// latest).
func (c *Client) GetConversationBefore(ctx context.Context, id string, before int64, limit int) (ConversationPage, error) {
	q := url.Values{}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/api/conversations/" + url.PathEscape(id)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out ConversationPage
	err := c.do(ctx, http.MethodGet, path, nil, nil, &out)
	return out, err
}

// DeleteConversation deletes a conversation.
func (c *Client) DeleteConversation(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/conversations/"+url.PathEscape(id), nil, nil, nil)
}

// PostTurn starts a turn in a conversation. A non-empty idempotencyKey
// makes a retried call return the turn the first call started, so a caller
// that saw a network error may safely call again with the same key.
func (c *Client) PostTurn(ctx context.Context, conversationID, content, idempotencyKey string) (TurnInfo, error) {
	return c.PostTurnInput(ctx, conversationID, toolmark.TurnInput{Content: content}, idempotencyKey)
}

// PostTurnInput starts a turn from a whole input: its text and, optionally,
// the model to answer it (an id of Models; "" keeps the conversation's)
// and the ids of uploaded files.
func (c *Client) PostTurnInput(ctx context.Context, conversationID string, in toolmark.TurnInput, idempotencyKey string) (TurnInfo, error) {
	var out TurnInfo
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	err := c.do(ctx, http.MethodPost, "/api/conversations/"+url.PathEscape(conversationID)+"/turns",
		in, h, &out)
	return out, err
}

// GetTurn returns a turn's status and its content so far.
func (c *Client) GetTurn(ctx context.Context, turnID string) (TurnState, error) {
	var out TurnState
	err := c.do(ctx, http.MethodGet, "/api/turns/"+url.PathEscape(turnID), nil, nil, &out)
	return out, err
}

// CancelTurn asks the server to cancel a turn; cancelling a finished or
// already cancelled turn is not an error.
func (c *Client) CancelTurn(ctx context.Context, turnID string) (toolmark.Turn, error) {
	var out struct {
		Turn toolmark.Turn `json:"turn"`
	}
	err := c.do(ctx, http.MethodPost, "/api/turns/"+url.PathEscape(turnID)+"/cancel", struct{}{}, nil, &out)
	return out.Turn, err
}

// Chat sends a message and waits for the whole answer. An empty
// conversationID starts a new conversation.
func (c *Client) Chat(ctx context.Context, conversationID, content string) (ChatResult, error) {
	var out ChatResult
	body := map[string]string{"content": content}
	if conversationID != "" {
		body["conversationId"] = conversationID
	}
	err := c.do(ctx, http.MethodPost, "/api/chat", body, nil, &out)
	return out, err
}

// newRequest builds a request to path with the auth header set.
func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// do sends a JSON request and decodes a JSON answer into out (when out is
// not nil); error answers become *APIError.
func (c *Client) do(ctx context.Context, method, path string, in any, h http.Header, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding answer: %w", method, path, err)
	}
	return nil
}

// decodeError turns an error answer into an *APIError, also when its body
// is not the JSON the server normally sends (a proxy's error page).
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	apiErr := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
		apiErr.Code, apiErr.Message = e.Error.Code, e.Error.Message
		return apiErr
	}
	apiErr.Code = codeForStatus(resp.StatusCode)
	apiErr.Message = strings.TrimSpace(string(b))
	if apiErr.Message == "" {
		apiErr.Message = http.StatusText(resp.StatusCode)
	}
	return apiErr
}

// codeForStatus guesses an error code for an answer without a JSON body.
func codeForStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return toolmark.ENOTFOUND
	case http.StatusUnauthorized, http.StatusForbidden:
		return toolmark.EUNAUTHORIZED
	case http.StatusConflict:
		return toolmark.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return toolmark.ETOOLARGE
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return toolmark.EUNAVAILABLE
	}
	if status >= 400 && status < 500 {
		return toolmark.EINVALID
	}
	return toolmark.EINTERNAL
}
