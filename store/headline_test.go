package store

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// headline is headlineOf of a body not split yet.
func headline(body string, lexemes []string) string {
	return headlineOf(body, splitWords(body), lexemes)
}

func TestHeadline(t *testing.T) {
	long := strings.Repeat("Water boils and salt goes in. ", 20)
	tests := []struct {
		name, body string
		lexemes    []string
		want       string
	}{
		{"stems and marks", "The runner cancels turns; a cancelled turn stops.", []string{"cancel"},
			"The runner «cancels» turns; a «cancelled» turn stops."},
		{"white space on one line", "Resume\n\n  works   after\ta crash.\n", []string{"crash"},
			"Resume works after a «crash»."},
		{"the match far in", long + "Goroutines are mentioned once. " + long, []string{"goroutin"},
			"… goes in. «Goroutines» are mentioned once. Water boils and salt goes in. Water boils and salt goes in. …"},
		{"no match: the first words", long, []string{"goroutin"},
			"Water boils and salt goes in. Water boils and salt goes in. Water boils and salt goes in. …"},
		{"the window with both words", "Heap pages. " + long + "Pages of the heap hold rows; heap pages fill.", []string{"heap", "page"},
			"… salt goes in. Water boils and salt goes in. «Pages» of the «heap» hold rows; «heap» «pages» fill."},
		{"distinct words outrank repeats", "Heap heap heap heap. " + long + "Heap pages.", []string{"heap", "page"},
			"… and salt goes in. Water boils and salt goes in. Water boils and salt goes in. «Heap» «pages»."},
		{"ties go to the earliest", "Heap pages. " + long + "Pages of the heap.", []string{"heap", "page"},
			"«Heap» «pages». Water boils and salt goes in. Water boils and salt goes in. Water boils and salt …"},
		{"words with digits are not stemmed", "Version v2s and v2 and 2024.", []string{"v2", "2024"},
			"Version v2s and «v2» and «2024»."},
		{"markup stays text", `<b>Crash</b> & <ToolCall type="x">`, []string{"crash"},
			`<b>«Crash»</b> & <ToolCall type="x">`},
		{"non-ASCII", "Ein naïve café, «quoted» and Überprüfung.", []string{"café", "überprüfung"},
			"Ein naïve «café», «quoted» and «Überprüfung»."},
		{"no words", " \n… — ", []string{"x"}, ""},
		{"no lexemes", "Some text.", nil, "Some text."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := headline(tt.body, tt.lexemes); got != tt.want {
				t.Errorf("headline(%q, %q)\n got %q\nwant %q", tt.body, tt.lexemes, got, tt.want)
			}
		})
	}
}

// FuzzHeadline checks that a snippet is the body's words, in order and
// contiguous, as they were, with only marks, ellipses and single spaces
// added, and that it never grows past its window.
func FuzzHeadline(f *testing.F) {
	f.Add("The runner cancels turns; a cancelled turn stops.", "cancel turn")
	f.Add("«a» … b\x00\xff c", "a b")
	f.Add(strings.Repeat("word ", 100)+"match", "match word")
	f.Fuzz(func(t *testing.T, body, query string) {
		if !utf8.ValidString(body) {
			return
		}
		var lexemes []string
		for _, w := range splitWords(query) {
			lexemes = append(lexemes, strings.ToLower(query[w.start:w.end]))
		}
		got := headline(body, lexemes)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if strings.ContainsAny(got, "\n\t\r") || strings.Contains(got, "  ") {
			t.Fatalf("not one line with single spaces: %q", got)
		}
		plain := strings.NewReplacer("«", "", "»", "", "…", "").Replace(got)
		bodyPlain := strings.NewReplacer("«", "", "»", "", "…", "").Replace(body)
		gw, bw := words(plain), words(bodyPlain)
		if len(gw) > headlineWords {
			t.Fatalf("%d words, more than %d: %q", len(gw), headlineWords, got)
		}
		if len(gw) == 0 {
			if len(bw) != 0 {
				t.Fatalf("empty snippet of a body with words: %q", body)
			}
			return
		}
		if !strings.Contains(" "+strings.Join(bw, " ")+" ", " "+strings.Join(gw, " ")+" ") {
			t.Fatalf("snippet %q is not a run of the body's words %q", got, body)
		}
	})
}

func words(s string) []string {
	var out []string
	for _, w := range splitWords(s) {
		out = append(out, s[w.start:w.end])
	}
	return out
}

// BenchmarkHeadline makes the snippet of a 900-byte document, the size of
// the demo corpus's documents (ts_headline took about 100 µs for one).
func BenchmarkHeadline(b *testing.B) {
	body := strings.Repeat("A turn's events are committed before they are sent, so a follower that resumes after a drop gets every event exactly once. ", 7)
	lexemes := []string{"resum", "cancel"}
	b.ReportAllocs()
	for b.Loop() {
		headline(body, lexemes)
	}
}

// TestStemsStayBounded stems more distinct words than the cache keeps: each
// stem is the stemmer's, and the cache never holds more than maxStems.
func TestStemsStayBounded(t *testing.T) {
	for i := range maxStems + 100 {
		w := "running" + strconv.Itoa(i) + "s"
		if got, want := stem(w), english.Stem(w, true); got != want {
			t.Fatalf("stem(%q) = %q, want %q", w, got, want)
		}
		stems.Lock()
		n := len(stems.m)
		stems.Unlock()
		if n > maxStems {
			t.Fatalf("the stem cache holds %d words, more than %d", n, maxStems)
		}
	}
	if got := stem("searching"); got != "search" {
		t.Errorf(`stem("searching") = %q, want "search"`, got)
	}
}

// TestDocCacheBound: the bodies a docCache keeps stay within
// maxCachedBodies, replacing a document does not count it twice, and the
// last body put is kept.
func TestDocCacheBound(t *testing.T) {
	var c docCache
	body := strings.Repeat("lantern ", (1<<20)/8) // 1 MiB
	for i := range 12 {
		c.put(fmt.Sprint("doc", i), "v1", body)
		c.put(fmt.Sprint("doc", i), "v2", body)
	}
	total := 0
	for _, d := range c.docs {
		total += len(d.body)
	}
	if total != c.bytes || c.bytes > maxCachedBodies {
		t.Errorf("the cache counts %d bytes and holds %d; want them equal and at most %d", c.bytes, total, maxCachedBodies)
	}
	if c.get("doc11", "v2") == nil || c.get("doc11", "v1") != nil {
		t.Errorf("the last document put is not kept at its version")
	}
}
