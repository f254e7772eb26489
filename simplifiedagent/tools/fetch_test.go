package tools_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

var loopback1 = netip.MustParsePrefix("127.0.0.1/32")

func mustPage(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/page.html")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestFetchURLReadable(t *testing.T) {
	page := mustPage(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		case "/redirect":
			http.Redirect(w, r, "/page", http.StatusFound)
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("just text"))
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG"))
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(strings.Repeat("a", 10000)))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/slow":
			time.Sleep(500 * time.Millisecond)
		case "/latin1":
			w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
			w.Write([]byte("<p>Caf\xe9 cr\xe8me</p>"))
		case "/meta":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<meta charset=\"windows-1252\"><p>\x93quoted\x94</p>"))
		case "/404":
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := tools.NewFetchURL(loopback1)
	f.MaxBytes = 4096
	f.Timeout = 200 * time.Millisecond
	tests := []struct {
		path    string
		want    []string
		notWant []string
		wantErr string
	}{
		{path: "/page", want: []string{"Title: Resuming streams & tags", "# ", "A client that reconnects sends Last-Event-ID and gets what it missed.", "- No duplicates\n- No lost tags", "seq 7"},
			notWant: []string{"secret", "alert", "color: red", "Home", "Enable JavaScript", "©"}},
		{path: "/redirect", want: []string{"URL: " + srv.URL + "/page", "Resuming a stream"}},
		{path: "/plain", want: []string{"just text"}},
		{path: "/latin1", want: []string{"Café crème"}},
		{path: "/meta", want: []string{"“quoted”"}},
		{path: "/big", want: []string{"[truncated]"}},
		{path: "/image", wantErr: "127.0.0.1 sent image/png, which fetch_url cannot read"},
		{path: "/loop", wantErr: "127.0.0.1 redirected too many times"},
		{path: "/slow", wantErr: "127.0.0.1 did not answer in time"},
		{path: "/404", wantErr: "127.0.0.1 answered HTTP 404 (Not Found)"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := f.Call(context.Background(), `{"url":"`+srv.URL+tt.path+`"}`)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if w == "# " {
					continue
				}
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("result contains %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestFetchURLRefuses checks the SSRF policy with the default settings: no
// request may reach the local machine or network.
func TestFetchURLRefuses(t *testing.T) {
	hit := make(chan string, 10)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- r.URL.String()
	}))
	defer local.Close()
	_, port, _ := net.SplitHostPort(local.Listener.Addr().String())

	// A server on 127.0.0.1 that is allow-listed redirects to one on
	// 127.0.0.2, which is not.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- "other " + r.URL.String()
	}))
	other.Listener.Close()
	other.Listener = ln
	other.Start()
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/secret", http.StatusFound)
	}))
	defer redirector.Close()

	tests := []struct {
		name  string
		url   string
		allow []netip.Prefix
	}{
		{"loopback", "http://127.0.0.1:" + port + "/", nil},
		{"localhost", "http://localhost:" + port + "/", nil},
		{"ipv6 loopback", "http://[::1]:" + port + "/", nil},
		{"ipv4-mapped ipv6", "http://[::ffff:127.0.0.1]:" + port + "/", nil},
		{"private", "http://10.0.0.1/", nil},
		{"private 192.168", "http://192.168.1.1/", nil},
		{"metadata", "http://169.254.169.254/latest/meta-data/", nil},
		{"aws ipv6 metadata", "http://[fd00:ec2::254]/", nil},
		{"cgnat", "http://100.64.0.1/", nil},
		{"unspecified", "http://0.0.0.0:" + port + "/", nil},
		{"multicast", "http://224.0.0.1/", nil},
		{"decimal", "http://2130706433:" + port + "/", nil},
		{"octal", "http://0177.0.0.1:" + port + "/", nil},
		{"hex", "http://0x7f.1:" + port + "/", nil},
		{"redirect to loopback", redirector.URL + "/", []netip.Prefix{loopback1}},
		{"file scheme", "file:///etc/passwd", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tools.NewFetchURL(tt.allow...)
			f.Timeout = 2 * time.Second
			_, err := f.Call(context.Background(), tt.url)
			if err == nil {
				t.Fatalf("fetching %s succeeded, want a refusal", tt.url)
			}
			if tt.name != "file scheme" && !errors.Is(err, tools.ErrRefusedAddress) {
				t.Errorf("error %v, want ErrRefusedAddress", err)
			}
		})
	}
	select {
	case u := <-hit:
		t.Errorf("a refused request reached a local server: %s", u)
	default:
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.216.34": true, "2606:4700::1111": true, "8.8.8.8": true,
		"127.0.0.1": false, "10.1.2.3": false, "172.16.0.1": false, "169.254.1.1": false,
		"100.100.100.100": false, "::1": false, "fe80::1": false, "fc00::1": false, "::": false,
		"255.255.255.255": false, "::ffff:10.0.0.1": false, "64:ff9b::a00:1": false,
	} {
		if got := tools.PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestFetchURLTagAttrs(t *testing.T) {
	attrs := tools.NewFetchURL().TagAttrs(map[string]any{"url": "https://example.com/a"})
	if len(attrs) != 1 || attrs[0].Key != "url" || attrs[0].Value != "https://example.com/a" {
		t.Errorf("TagAttrs = %v", attrs)
	}
}
