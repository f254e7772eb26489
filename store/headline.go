package store

import (
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Knowledge-base snippets are made here, not by PostgreSQL's ts_headline:
// ts_headline parses the whole document with the text-search parser and
// runs every word through the dictionaries, for every hit — about 100 µs
// for a 900-byte document, half of a search's time in the database, which
// every replica shares. Here only the words that could match are stemmed,
// with the same Snowball English stemmer as PostgreSQL's english
// configuration (TestHeadlineMarksWhatPostgreSQLMarks checks the two agree).
// Documents longer than headlineMaxBody still get ts_headline's snippet, so
// a search does not carry megabytes of text to the server.

const (
	// headlineWords is how many words a snippet holds.
	headlineWords = 18
	// headlineLead is how many words a snippet shows before its first match.
	headlineLead = 2
	// headlineMaxBody is the longest body whose snippet is made here.
	headlineMaxBody = 64 << 10
)

// headlineOf returns the snippet of a search hit: about headlineWords
// words of body (split into words, splitWords) around its densest cluster
// of the query's words, on one line, the matched words set in « and »,
// with "…" where the body was cut. lexemes are the query's words as
// PostgreSQL's english configuration makes them (lowercased and stemmed).
// A body without a match (a hit by its title) gives its first words.
func headlineOf(body string, words []span, lexemes []string) string {
	if len(words) == 0 {
		return ""
	}
	match := matchWords(body, words, lexemes)
	start, end := bestWindow(len(words), match, len(lexemes))
	var b strings.Builder
	b.Grow(int(words[end-1].end-words[start].start) + 16)
	if start > 0 {
		b.WriteString("… ")
	}
	// Keep the punctuation that opens the first word ("(see"), not what
	// comes before it.
	lead := body[:words[start].start]
	if start > 0 {
		lead = body[words[start-1].end:words[start].start]
	}
	if j := strings.LastIndexFunc(lead, unicode.IsSpace); j >= 0 {
		_, size := utf8.DecodeRuneInString(lead[j:])
		lead = lead[j+size:]
	}
	b.WriteString(lead)
	for i := start; i < end; i++ {
		w := words[i]
		if match[i] != 0 {
			b.WriteString("«")
			b.WriteString(body[w.start:w.end])
			b.WriteString("»")
		} else {
			b.WriteString(body[w.start:w.end])
		}
		gapEnd := len(body)
		if i+1 < len(words) {
			gapEnd = int(words[i+1].start)
		}
		gap := body[w.end:gapEnd]
		if i == end-1 {
			// Keep the punctuation that closes the last word ("done."), not
			// what follows it.
			if j := strings.IndexFunc(gap, unicode.IsSpace); j >= 0 {
				gap = gap[:j]
			}
		}
		writeCollapsed(&b, gap)
	}
	if end < len(words) {
		b.WriteString(" …")
	}
	return strings.TrimSpace(b.String())
}

// span is a word of a body: a run of letters and digits, as PostgreSQL's
// text-search parser splits words for the english configuration. A word
// joined to others by '/', '@' or a '.' between ASCII letters or digits is
// part of a path, URL, e-mail address or host name, which PostgreSQL
// indexes whole, not as words: it is compound and never matches. Such a
// run is made of letters, digits and . / @ - _ ~ %; anything else (white
// space, brackets, quotes, '<', ':') ends it.
type span struct {
	start, end int32 // a body whose snippet is made here is under 64 KiB
	compound   bool
}

func splitWords(s string) []span {
	words := make([]span, 0, len(s)/5+1) // English averages about 6 bytes a word with its space
	in, compound, dot := false, false, false
	chunk := 0 // the first word of the current run of chunk characters
	var prev rune
	endChunk := func() {
		if compound {
			for i := chunk; i < len(words); i++ {
				words[i].compound = true
			}
		}
		chunk, compound = len(words), false
	}
	for i, r := range s {
		var word bool
		if r < utf8.RuneSelf {
			word = asciiAlnum(r)
		} else {
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case word && !in:
			words = append(words, span{start: int32(i)})
			in = true
		case !word && in:
			words[len(words)-1].end = int32(i)
			in = false
		}
		switch {
		case r == '/' || r == '@' || dot && asciiAlnum(r):
			compound = true
		case !word && !strings.ContainsRune(".-_~%", r):
			endChunk() // white space, brackets, quotes, '<', ':', ',' …
		}
		dot = r == '.' && asciiAlnum(prev)
		prev = r
	}
	if in {
		words[len(words)-1].end = int32(len(s))
	}
	endChunk()
	return words
}

func asciiAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// matchWords returns, per word, the lexeme it matches as its number in
// lexemes plus one, or 0 (a byte or two a word, not a string's sixteen).
// Only words whose first letter starts some lexeme are stemmed: the English
// stemmer changes a word's ending, never its first letter.
func matchWords(body string, words []span, lexemes []string) []uint16 {
	match := make([]uint16, len(words))
	set := make(map[string]uint16, len(lexemes))
	first := make(map[rune]bool, len(lexemes))
	for i, l := range lexemes {
		if l == "" || i >= math.MaxUint16 {
			continue
		}
		if _, dup := set[l]; !dup {
			set[l] = uint16(i + 1)
		}
		r, _ := utf8.DecodeRuneInString(l)
		first[r] = true
	}
	if len(set) == 0 {
		return match
	}
	for i, w := range words {
		word := body[w.start:w.end]
		r, _ := utf8.DecodeRuneInString(word)
		if w.compound || !first[unicode.ToLower(r)] {
			continue
		}
		key := strings.ToLower(word)
		if !strings.ContainsFunc(key, unicode.IsDigit) {
			// Words with digits are indexed as they are, the others stemmed.
			key = stem(key)
		}
		match[i] = set[key]
	}
	return match
}

// maxStems bounds the stems kept: a knowledge base's vocabulary is
// small and searched again and again, but a document could hold any number
// of distinct words.
const maxStems = 1 << 15

// stems keeps the English stems of the words stemmed so far: stemming was
// a third of a snippet's time, and the words of a knowledge base recur. It
// starts over when it holds maxStems words.
var stems struct {
	sync.Mutex
	m map[string]string
}

// stem returns the English stem of the lower-case word w.
func stem(w string) string {
	stems.Lock()
	s, ok := stems.m[w]
	stems.Unlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	stems.Lock()
	if stems.m == nil || len(stems.m) >= maxStems {
		stems.m = make(map[string]string, 1024)
	}
	stems.m[strings.Clone(w)] = s // w may be a slice of a document
	stems.Unlock()
	return s
}

// bestWindow returns the words [start, end) of the snippet: of the windows
// of headlineWords words that start headlineLead words before a match, the
// one with the most distinct lexemes, then the most matches, then the
// earliest; the first words when nothing matches.
func bestWindow(n int, match []uint16, lexemes int) (start, end int) {
	width := min(headlineWords, n)
	bestDistinct, bestCount, last := 0, 0, -1
	seen := make([]int, min(lexemes, math.MaxUint16)+1) // per lexeme, the window (its first word + 1) that last counted it
	for i, m := range match {
		if m == 0 {
			continue
		}
		s := min(max(0, i-headlineLead), n-width)
		if s == last {
			continue
		}
		last = s
		distinct, count := 0, 0
		for _, m := range match[s : s+width] {
			if m == 0 {
				continue
			}
			if seen[m] != s+1 {
				seen[m] = s + 1
				distinct++
			}
			count++
		}
		if distinct > bestDistinct || distinct == bestDistinct && count > bestCount {
			start, bestDistinct, bestCount = s, distinct, count
		}
	}
	return start, start + width
}

// writeCollapsed writes s with each run of white space as one space.
func writeCollapsed(b *strings.Builder, s string) {
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
}
