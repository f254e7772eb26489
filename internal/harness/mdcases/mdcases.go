// Package mdcases reads and writes the Markdown test cases of the goldmark
// extension and the live view: goldmark-style case files (markdown in, HTML
// out) and the CommonMark spec's examples.
package mdcases

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

const (
	caseSeparator = "//- - - - - - - - -//"
	caseEnd       = "//= = = = = = = = = = = = = = = = = = = = = = = =//"
)

// Case is one case of a goldmark-style case file: markdown in, HTML out.
type Case struct {
	No          int
	Description string
	Markdown    string
	Expected    string
}

// Read reads a case file in goldmark's _test format:
//
//	1:description
//	//- - - - - - - - -//
//	markdown
//	//- - - - - - - - -//
//	html
//	//= = = = = = = = = = = = = = = = = = = = = = = =//
func Read(tb testing.TB, path string) []Case {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading cases: %v", err)
	}
	var cases []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	const (
		header = iota
		input
		output
	)
	state := header
	var c Case
	var buf []string
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch state {
		case header:
			if strings.TrimSpace(text) == "" {
				continue
			}
			no, desc, _ := strings.Cut(text, ":")
			if _, err := fmt.Sscanf(no, "%d", &c.No); err != nil {
				tb.Fatalf("%s:%d: bad case header %q", path, line, text)
			}
			c.Description = desc
			if !sc.Scan() || sc.Text() != caseSeparator {
				tb.Fatalf("%s:%d: want %s after the header", path, line+1, caseSeparator)
			}
			line++
			state, buf = input, nil
		case input:
			if text == caseSeparator {
				c.Markdown = strings.Join(buf, "\n")
				state, buf = output, nil
				continue
			}
			buf = append(buf, text)
		case output:
			if text == caseEnd {
				c.Expected = strings.Join(buf, "\n")
				cases = append(cases, c)
				c, state = Case{}, header
				continue
			}
			buf = append(buf, text)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading %s: %v", path, err)
	}
	if state != header {
		tb.Fatalf("%s: last case is not terminated by %s", path, caseEnd)
	}
	return cases
}

// Write writes cases back in the case-file format.
func Write(tb testing.TB, path string, cases []Case) {
	tb.Helper()
	var b strings.Builder
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d:%s\n%s\n%s\n%s\n%s\n%s\n", c.No, c.Description, caseSeparator, c.Markdown, caseSeparator, c.Expected, caseEnd)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatalf("writing %s: %v", path, err)
	}
}

// SpecExample is one example of the CommonMark spec (spec.json).
type SpecExample struct {
	Markdown  string `json:"markdown"`
	HTML      string `json:"html"`
	Example   int    `json:"example"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Section   string `json:"section"`
}

// ReadSpec reads the CommonMark spec's examples from a spec.json file.
func ReadSpec(tb testing.TB, path string) []SpecExample {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading spec: %v", err)
	}
	var examples []SpecExample
	if err := json.Unmarshal(data, &examples); err != nil {
		tb.Fatalf("decoding spec: %v", err)
	}
	return examples
}
