package api_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/testserver"
	"github.com/toolmark/toolmark/simplifiedagent/demo"
)

// rawStream opens a turn's event stream over a connection of its own,
// with the request written by hand (HTTP/1.1, as a browser's or curl's),
// and returns the response and the connection. rcvbuf > 0 makes the
// connection's receive buffer that small, so that the server's socket fills
// when the client does not read.
func rawStream(t *testing.T, base, turnID, acceptEncoding string, rcvbuf int) (*http.Response, net.Conn) {
	t.Helper()
	return rawGet(t, base, "/api/turns/"+turnID+"/events", acceptEncoding, rcvbuf)
}

// rawGet is rawStream for any path.
func rawGet(t *testing.T, base, path, acceptEncoding string, rcvbuf int) (*http.Response, net.Conn) {
	t.Helper()
	resp, conn, err := dialStream(base, path, acceptEncoding, rcvbuf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return resp, conn
}

// dialStream is rawGet for a goroutine of the test's: it returns its error.
func dialStream(base, path, acceptEncoding string, rcvbuf int) (*http.Response, net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if rcvbuf > 0 {
		d.Control = testserver.SocketOption(syscall.SO_RCVBUF, rcvbuf)
	}
	host := strings.TrimPrefix(base, "http://")
	conn, err := d.Dial("tcp", host)
	if err != nil {
		return nil, nil, err
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nAccept: text/event-stream\r\n"
	if acceptEncoding != "" {
		req += "Accept-Encoding: " + acceptEncoding + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		conn.Close()
		return nil, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("reading the response's head: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp, conn, nil
}

// body returns the response's body, decompressed when it is gzip, and
// checks the head of a taken-over stream.
func streamBody(t *testing.T, resp *http.Response, gzipped bool) io.Reader {
	t.Helper()
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type %q", got)
	}
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || !resp.Close {
		t.Errorf("Transfer-Encoding %v, close %v: want chunked, close", resp.TransferEncoding, resp.Close)
	}
	if resp.Header.Get("X-Turn-Id") == "" || resp.Header.Get("Date") == "" {
		t.Errorf("head %v", resp.Header)
	}
	if !gzipped {
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Fatalf("Content-Encoding %q, asked for none", ce)
		}
		return resp.Body
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", ce)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// readStream reads a stream's frames to its end, which must be clean (the
// last chunk, and gzip's trailer when compressed), and returns its events,
// its comments and whether it ended with the server's hint to reconnect.
func readStream(t *testing.T, body io.Reader) (evs []toolmark.Event, comments int, retry string) {
	t.Helper()
	comments, err := readFrames(body, func(f frame) bool {
		if f.Data != "" {
			evs = append(evs, mustEvent(t, f))
		}
		if f.Retry != "" {
			retry = f.Retry
		}
		return true
	})
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return evs, comments, retry
}

// TestTakenOverStream follows turns over HTTP/1.1 connections that the
// server takes over, with and without gzip: the head is a valid chunked
// response, the body ends cleanly, every event comes once and in order, the
// hub wrote the parked follower's events, and idle stretches carry
// keep-alives.
func TestTakenOverStream(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond, Heartbeat: 12 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	hub := srv.App.Runner.Hub()
	for _, enc := range []string{"", "gzip", "gzip, deflate, br"} {
		t.Run("encoding="+enc, func(t *testing.T) {
			before := hub.DirectStats()
			turn := c.postTurn(c.newConversation(), twoToolQuestion)
			resp, _ := rawStream(t, srv.URL, turn.ID, enc, 0)
			evs, comments, _ := readStream(t, streamBody(t, resp, enc != ""))
			checkStream(t, srv, evs)
			if comments == 0 {
				t.Error("no keep-alive while the demo paused")
			}
			if after := hub.DirectStats(); after.Writes == before.Writes {
				t.Errorf("the hub wrote nothing to the parked follower: %+v", after)
			}
		})
	}
	t.Run("Go client", func(t *testing.T) {
		// net/http's client asks for gzip and decompresses.
		before := hub.DirectStats()
		turn := c.postTurn(c.newConversation(), twoToolQuestion)
		resp := c.stream(context.Background(), turn.ID, -1)
		defer resp.Body.Close()
		if !resp.Uncompressed || !resp.Close {
			t.Errorf("uncompressed %v, close %v: want a gzip stream the server took over", resp.Uncompressed, resp.Close)
		}
		evs, _, _ := readStream(t, resp.Body)
		checkStream(t, srv, evs)
		if after := hub.DirectStats(); after.Writes == before.Writes {
			t.Errorf("the hub wrote nothing to the parked follower: %+v", after)
		}
	})
}

// TestTakenOverStreamSlowReader stops reading a stream while a long answer
// streams, so that the server's socket fills: the hub hands the follower
// back to its goroutine with what the socket did not take, and the client,
// reading again, gets every event once and in order.
func TestTakenOverStreamSlowReader(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SendBuffer: 4096, Model: &app.ModelConfig{
		Provider: "demo", DemoDelay: -1, Demo: demo.Config{AnswerBytes: 512 << 10},
	}})
	c := newClient(t, srv.URL, "")
	hub := srv.App.Runner.Hub()
	for _, enc := range []string{"", "gzip"} {
		t.Run("encoding="+enc, func(t *testing.T) {
			before := hub.DirectStats()
			turn := c.postTurn(c.newConversation(), twoToolQuestion)
			resp, _ := rawStream(t, srv.URL, turn.ID, enc, 4096)
			body := bufio.NewReaderSize(streamBody(t, resp, enc != ""), 64)
			// Read the first frame, so that the follower has caught up
			// and parked, then nothing until the turn has ended.
			if _, err := body.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			var tr struct {
				Turn toolmark.Turn `json:"turn"`
			}
			deadline := time.Now().Add(time.Minute)
			for c.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr); !tr.Turn.Status.Final(); c.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr) {
				if time.Now().After(deadline) {
					t.Fatal("the turn did not end")
				}
				time.Sleep(20 * time.Millisecond)
			}
			evs, _, _ := readStream(t, io.MultiReader(strings.NewReader("\n"), body))
			// The first line read was "retry: 1000"; the events follow.
			checkStream(t, srv, evs)
			if after := hub.DirectStats(); after.HandedBack == before.HandedBack {
				t.Errorf("the socket never filled (%+v): the test did not test the hand-back", after)
			}
		})
	}
	// The metrics say so too.
	_, _, b := c.do("GET", "/metrics", "")
	for _, name := range []string{"toolmark_stream_hub_writes_total", "toolmark_stream_handed_back_total"} {
		if !strings.Contains(string(b), "\n"+name+" ") || strings.Contains(string(b), "\n"+name+" 0\n") {
			t.Errorf("/metrics: %s missing or zero", name)
		}
	}
}

// TestTakenOverStreamShutdown stops the server while a taken-over stream
// is parked: the stream ends cleanly, with the hint to reconnect or the
// turn's end, and the server does not wait for the client.
func TestTakenOverStreamShutdown(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond, Grace: 200 * time.Millisecond})
	c := newClient(t, srv.URL, "")
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	resp, _ := rawStream(t, srv.URL, turn.ID, "gzip", 0)
	body := streamBody(t, resp, true)
	stopped := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // parked by then
		start := time.Now()
		err := srv.Stop()
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("shutting down took %v", d)
		}
		stopped <- err
	}()
	evs, _, retry := readStream(t, body)
	if len(evs) == 0 {
		t.Fatal("no events before the shutdown")
	}
	if !evs[len(evs)-1].Type.Terminal() && retry != "100" {
		t.Errorf("the stream ended with %s and retry %q: want the turn's end or the hint to reconnect", evs[len(evs)-1].Type, retry)
	}
	<-stopped
}

// TestTakenOverStreamThroughAProxy follows a turn through a reverse proxy
// (net/http/httputil's, as a deployment puts one in front): the stream
// the server took over reaches the client live, compressed end to end,
// every event once and in order.
func TestTakenOverStreamThroughAProxy(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	backend, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(backend))
	defer proxy.Close()
	c := newClient(t, proxy.URL, "")
	hub := srv.App.Runner.Hub()
	before := hub.DirectStats()
	turn := c.postTurn(c.newConversation(), twoToolQuestion)
	resp := c.stream(context.Background(), turn.ID, -1)
	defer resp.Body.Close()
	if !resp.Uncompressed {
		t.Error("the stream was not compressed through the proxy")
	}
	var evs []toolmark.Event
	live := false
	if _, err := readFrames(resp.Body, func(f frame) bool {
		if f.Data == "" {
			return true
		}
		evs = append(evs, mustEvent(t, f))
		if len(evs) == 1 {
			// The first event came through before the turn ended: the
			// proxy passed the stream on as it came.
			var tr struct {
				Turn toolmark.Turn `json:"turn"`
			}
			c.mustJSON("GET", "/api/turns/"+turn.ID, "", 200, &tr)
			live = !tr.Turn.Status.Final()
		}
		return true
	}); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	checkStream(t, srv, evs)
	if !live {
		t.Error("the first event came through only once the turn had ended")
	}
	if after := hub.DirectStats(); after.Writes == before.Writes {
		t.Errorf("the hub wrote nothing to the parked follower: %+v", after)
	}
}

// TestStreamStuckReader opens streams whose client stops reading: once a
// write has waited StreamWriteTimeout for the client, the server closes
// the stream (no goroutine is held by a client that went quiet), and the
// client, reading again, resumes from its last event with nothing lost.
func TestStreamStuckReader(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{SendBuffer: 4096, StreamWriteTimeout: 300 * time.Millisecond, Model: &app.ModelConfig{
		Provider: "demo", DemoDelay: -1, Demo: demo.Config{AnswerBytes: 512 << 10},
	}})
	c := newClient(t, srv.URL, "")
	for _, path := range []string{"/events", "/events?render=html"} {
		t.Run(path, func(t *testing.T) {
			turn := c.postTurn(c.newConversation(), twoToolQuestion)
			resp, _ := rawGet(t, srv.URL, "/api/turns/"+turn.ID+path, "", 4096)
			// Nothing is read until the server has closed the stream.
			deadline := time.Now().Add(time.Minute)
			for !strings.Contains(string(c.metrics()), "\ntoolmark_active_streams 0\n") {
				if time.Now().After(deadline) {
					t.Fatal("the stream of a client that stopped reading is still open")
				}
				time.Sleep(20 * time.Millisecond)
			}
			var evs []toolmark.Event
			_, err := readFrames(resp.Body, func(f frame) bool {
				if f.Data != "" && f.Event != "render" {
					evs = append(evs, mustEvent(t, f))
				}
				return true
			})
			if err == nil {
				t.Fatal("the stream ended cleanly: want it cut off")
			}
			if strings.Contains(path, "render") {
				return
			}
			if len(evs) == 0 || evs[len(evs)-1].Type.Terminal() {
				t.Fatalf("%d events, the last terminal: the client was not cut off mid-turn", len(evs))
			}
			evs = append(evs, c.allEvents(turn.ID, evs[len(evs)-1].Seq)...)
			checkStream(t, srv, evs)
		})
	}
}
