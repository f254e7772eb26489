package toolcallmarkup_test

import (
	"strings"
	"testing"

	"github.com/toolmark/toolmark/toolcallmarkup"
)

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 60, "short"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ééééééé", 4, "ééé…"},
		{strings.Repeat("x", 100), 60, strings.Repeat("x", 59) + "…"},
	}
	for _, tt := range tests {
		if got := toolcallmarkup.ShortenRunes(tt.in, tt.n); got != tt.want {
			t.Errorf("ShortenRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	for n := 1; n < 12; n++ {
		got := toolcallmarkup.Shorten("aéb€c😀d", n)
		if len(got) > n && got != "…" {
			t.Errorf("toolcallmarkup.Shorten(_, %d) = %q: %d bytes", n, got, len(got))
		}
		if !strings.HasSuffix(got, "…") && got != "aéb€c😀d" {
			t.Errorf("toolcallmarkup.Shorten(_, %d) = %q: cut without an ellipsis", n, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := toolcallmarkup.OneLine("a\n\tb   c", 10); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := toolcallmarkup.OneLine(strings.Repeat("ab ", 20), 10); len(got) > 10 || !strings.HasSuffix(got, "…") {
		t.Errorf("OneLine cut = %q", got)
	}
}
