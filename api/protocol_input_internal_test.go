package api

import (
	"bytes"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFileFromURL(t *testing.T) {
	r := httptest.NewRequest("POST", "http://chat.example/api/ai-sdk/chat", nil)
	for _, tt := range []struct {
		url, id, data, err string
	}{
		{url: "data:text/plain;base64,aGk=", data: "hi"},
		{url: "data:image/png;name=a.png;base64,aGk", data: "hi"},
		{url: "DATA:,a%20b", data: "a b"},
		{url: "data:text/plain;base64,-_8", data: "\xfb\xff"},
		{url: "/api/uploads/u1", id: "u1"},
		{url: "http://chat.example/api/uploads/u2", id: "u2"},
		{url: "data:text/plain;base64", err: "malformed data: URL"},
		{url: "data:;base64,@@", err: "malformed base64"},
		{url: "https://elsewhere.example/api/uploads/u1", err: "only a data: URL"},
		{url: "/api/uploads/u1/../x", err: "only a data: URL"},
		{url: "/api/uploads/u1?x=1", err: "only a data: URL"},
		{url: "/api/uploads/", err: "only a data: URL"},
		{url: "ftp://chat.example/api/uploads/u1", err: "only a data: URL"},
		{url: "blob:http://chat.example/1", err: "only a data: URL"},
	} {
		f, err := fileFromURL(r, "f.txt", tt.url)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), `"f.txt"`) {
				t.Errorf("%s: got %v, want an error naming the file with %q", tt.url, err, tt.err)
			}
		case err != nil || f.uploadID != tt.id || string(f.data) != tt.data:
			t.Errorf("%s: got id %q data %q (%v), want id %q data %q", tt.url, f.uploadID, f.data, err, tt.id, tt.data)
		}
	}
}

// FuzzFileFromURL: no URL panics; an upload's id is one path segment; a
// base64 data: URL of any bytes gives those bytes back.
func FuzzFileFromURL(f *testing.F) {
	for _, s := range []string{"data:text/plain;base64,aGk=", "DATA:,a%20b", "/api/uploads/u1", "http://h/api/uploads/u2?x", "data:", "data:,%zz", "/api/uploads/a%2Fb"} {
		f.Add(s, []byte("hi"))
	}
	r := httptest.NewRequest("POST", "http://h/api/ai-sdk/chat", nil)
	f.Fuzz(func(t *testing.T, raw string, b []byte) {
		if p, err := fileFromURL(r, "f", raw); err == nil && p.data == nil && (p.uploadID == "" || strings.Contains(p.uploadID, "/")) {
			t.Fatalf("%q: upload id %q", raw, p.uploadID)
		}
		p, err := fileFromURL(r, "f", "data:application/octet-stream;base64,"+base64.StdEncoding.EncodeToString(b))
		if err != nil || !bytes.Equal(p.data, b) {
			t.Fatalf("%x: got %x (%v)", b, p.data, err)
		}
	})
}
