package bench

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Protocol followers: besides its event streams, a turn can be followed
// by streams of the other protocols the server speaks, as a deployment
// with the web page and an AI SDK frontend open on the same chat would
// have them. They load the server as such clients do; their latencies are
// not measured (the report's figures stay those of the event streams), but
// a stream of theirs that fails or does not end as its protocol says fails
// the turn.
const (
	ProtocolPage  = "page"   // the rendered HTML the web page reads (?render=html), gzip accepted
	ProtocolAISDK = "ai-sdk" // the AI SDK UI message stream of the turn's chat (its resume route), gzip accepted
)

// checkProtocols refuses a name that is not one of the protocols above.
func checkProtocols(names []string) error {
	for _, p := range names {
		if p != ProtocolPage && p != ProtocolAISDK {
			return fmt.Errorf("unknown protocol follower %q: %s or %s", p, ProtocolPage, ProtocolAISDK)
		}
	}
	return nil
}

// followProtocol reads the stream of protocol p of turnID, in conversation
// conv, to its end, and returns why it did not end as the protocol says.
func (s *streamer) followProtocol(ctx context.Context, p, conv, turnID string) error {
	if p == ProtocolPage {
		return s.follow(ctx, turnID, nil, true).err
	}
	return s.drainAISDK(ctx, conv)
}

// drainAISDK reads the AI SDK stream of chat conv, through the route
// useChat resumes by, to its last line, which must be [DONE]. A chat
// whose turn already ended answers 204: nothing to read.
func (s *streamer) drainAISDK(ctx context.Context, conv string) error {
	u := s.base + "/api/ai-sdk/chat/" + url.PathEscape(conv) + "/stream"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("opening the AI SDK stream: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil
	case http.StatusOK:
	default:
		return fmt.Errorf("opening the AI SDK stream: HTTP %d", resp.StatusCode)
	}
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return fmt.Errorf("reading the AI SDK stream: %w", err)
		}
		body = zr
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	last := ""
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = line
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the AI SDK stream: %w", unwrapURLError(err))
	}
	if last != "[DONE]" {
		return errors.New("the AI SDK stream ended without [DONE]")
	}
	return nil
}
