package tools_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

var addressRE = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+|\[::1\]|dial tcp|lookup |goroutine`)

// TestFetchErrorsUsersCanRead: a failed fetch says what happened in words
// a user understands, names no internal address, and logs the whole cause.
func TestFetchErrorsUsersCanRead(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://localhost:" + strings.TrimPrefix(closed.Addr().String(), "127.0.0.1:") + "/x"
	closed.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	tests := []struct {
		name  string
		allow bool
		url   string
		want  string
	}{
		{"private address", false, srv.URL + "/gone", "127.0.0.1 is a local or private address, which fetch_url does not visit"},
		{"name of a private address", false, closedURL, "localhost is a local or private address, which fetch_url does not visit"},
		{"connection refused", true, closedURL, "localhost refused the connection"},
		{"HTTP error", true, srv.URL + "/gone", "127.0.0.1 answered HTTP 410 (Gone)"},
		{"timeout", true, srv.URL + "/slow", "127.0.0.1 did not answer in time"},
		{"not a URL", true, "http://[::1", "that is not a valid URL"},
		{"scheme", true, "file:///etc/passwd", "only http and https URLs can be fetched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			f := tools.NewFetchURL()
			if tt.allow {
				f = tools.NewFetchURL(loopback)
			}
			f.Timeout = 100 * time.Millisecond
			f.Logger = slog.New(slog.NewTextHandler(&log, nil))
			_, err := f.Call(context.Background(), `{"url":"`+tt.url+`"}`)
			if err == nil {
				t.Fatal("no error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if addressRE.MatchString(err.Error()) {
				t.Errorf("the message names an internal address: %q", err)
			}
			if got := tools.UserMessage(err); got != tt.want {
				t.Errorf("UserMessage = %q, want %q", got, tt.want)
			}
			if !strings.Contains(log.String(), "tool failed") || !strings.Contains(log.String(), "err=") {
				t.Errorf("the log lacks the cause: %s", log.String())
			}
		})
	}
}

// TestReachMessages words the network failures a fetch can meet.
func TestReachMessages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	f := tools.NewFetchURL(netip.MustParsePrefix("127.0.0.0/8"))
	f.Logger = slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	// A TLS handshake with a server whose certificate nobody trusts.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	_, err := f.Call(context.Background(), tlsSrv.URL)
	if want := "could not make a secure connection to 127.0.0.1"; err == nil || err.Error() != want {
		t.Errorf("TLS: got %v, want %q", err, want)
	}
}

func TestUserMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&tools.Error{Msg: "short", Err: errors.New("long 10.0.0.1:53")}, "short"},
		{fmt.Errorf("wrapped: %w", &tools.Error{Msg: "short"}), "short"},
		{errors.New("lookup example.com on 10.255.255.53:53: no such host"), "lookup example.com on an internal address: no such host"},
		{errors.New("dial tcp [fd00::1]:8080: connection refused"), "dial tcp an internal address: connection refused"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := tools.UserMessage(tt.err); got != tt.want {
			t.Errorf("UserMessage(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type emptyKB struct{}

func (emptyKB) SearchDocuments(context.Context, string, int) ([]toolmark.DocumentHit, error) {
	return nil, nil
}
func (emptyKB) CountDocuments(context.Context) (int, error) { return 0, nil }

type brokenKB struct{}

func (brokenKB) SearchDocuments(context.Context, string, int) ([]toolmark.DocumentHit, error) {
	return nil, errors.New("dial tcp 10.1.2.3:5432: connection refused")
}

// TestSearchErrors: an empty knowledge base says how to load documents; a
// broken one says so without its address.
func TestSearchErrors(t *testing.T) {
	out, err := tools.NewSearchDocuments(emptyKB{}).Call(context.Background(), "resume")
	if err != nil || !strings.Contains(out, "toolmark ingest") {
		t.Errorf("empty knowledge base: got %q, %v", out, err)
	}
	var log bytes.Buffer
	s := tools.NewSearchDocuments(brokenKB{})
	s.Logger = slog.New(slog.NewTextHandler(&log, nil))
	_, err = s.Call(context.Background(), "resume")
	if err == nil || err.Error() != "the knowledge base could not be searched" || !strings.Contains(log.String(), "10.1.2.3:5432") {
		t.Errorf("broken knowledge base: got %v, log %s", err, log.String())
	}
}
