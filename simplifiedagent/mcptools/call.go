package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmark/toolmark/simplifiedagent"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

// pending is an open call: its context (for progress events) and the
// silence timer that progress resets.
type pending struct {
	ctx   context.Context
	mu    sync.Mutex
	timer *time.Timer
	quiet time.Duration
}

func (p *pending) heard() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer.Reset(p.quiet)
}

// onProgress turns a server's progress notification into a tool_progress
// event of the call it belongs to, and restarts that call's silence timer.
func (s *server) onProgress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	tok := fmt.Sprint(p.ProgressToken)
	s.mu.Lock()
	c := s.progress[tok]
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.heard()
	simplifiedagent.ReportProgress(c.ctx, p.Progress, p.Total, p.Message)
}

var errSilent = errors.New("the server was silent too long")

// call calls the server's tool name with the JSON object args. A call that
// hears nothing — no answer and no progress — for the server's timeout
// ends with an error; cancelling ctx sends notifications/cancelled.
func (s *server) call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	quiet := s.cfg.Timeout
	sess, err := s.session(ctx, quiet)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, s.userError(err, "the %s tool server is not connected", s.cfg.Name)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p := &pending{ctx: ctx, quiet: quiet}
	p.timer = time.AfterFunc(quiet, func() { cancel(errSilent) })
	defer p.timer.Stop()
	s.mu.Lock()
	s.nextTok++
	tok := "toolmark-" + strconv.Itoa(s.nextTok)
	s.progress[tok] = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.progress, tok)
		s.mu.Unlock()
	}()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(tok)
	res, err := sess.CallTool(cctx, params)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(context.Cause(cctx), errSilent):
		return nil, s.userError(err, "%s did not answer within %s", s.cfg.Name, seconds(quiet))
	case err != nil:
		return nil, s.callError(sess, err)
	case res == nil:
		return nil, s.userError(errors.New("empty result"), "the %s tool server sent an empty answer", s.cfg.Name)
	}
	return res, nil
}

// callError is the sentence for a call that failed in the protocol or the
// transport; the cause goes to the log.
func (s *server) callError(sess *mcp.ClientSession, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != codeRejected {
		return s.userError(err, "the %s tool server refused the call (error %d)", s.cfg.Name, we.Code)
	}
	// The connection failed: later calls wait for the reconnection
	// instead of failing on the same dead session.
	s.drop(sess)
	if s.cfg.Transport == TransportStdio {
		return s.userError(err, "the %s tool server stopped", s.cfg.Name)
	}
	return s.userError(err, "the %s tool server could not be reached or gave no usable answer", s.cfg.Name)
}

// codeRejected is the code the SDK gives a request its transport could not
// deliver (its jsonrpc2.ErrRejected): a transport failure, not the server's
// answer.
const codeRejected = -32005

// drop closes sess after a transport failure, unless the server already
// moved on to another session.
func (s *server) drop(sess *mcp.ClientSession) {
	s.mu.Lock()
	current := s.sess == sess
	s.mu.Unlock()
	if current {
		s.setState(StatusConnecting, "", nil)
		go func() { _ = sess.Close() }()
	}
}

func (s *server) userError(cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	s.log.Warn("MCP call failed", "err", cause, "said", msg)
	return &tools.Error{Msg: msg, Err: cause}
}

func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.Itoa(int(d/time.Second)) + " s"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
