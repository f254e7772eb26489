package markdown

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var update = flag.Bool("update", false, "rewrite the expected HTML of the case files in testdata")

const (
	caseSeparator = "//- - - - - - - - -//"
	caseEnd       = "//= = = = = = = = = = = = = = = = = = = = = = = =//"
)

// testCase is one case of a goldmark-style case file: markdown in, HTML out.
type testCase struct {
	No          int
	Description string
	Markdown    string
	Expected    string
}

// mustReadCases reads a case file in goldmark's _test format:
//
//	1:description
//	//- - - - - - - - -//
//	markdown
//	//- - - - - - - - -//
//	html
//	//= = = = = = = = = = = = = = = = = = = = = = = =//
func mustReadCases(tb testing.TB, path string) []testCase {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading cases: %v", err)
	}
	var cases []testCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	const (
		header = iota
		input
		output
	)
	state := header
	var c testCase
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
				c, state = testCase{}, header
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

// writeCases writes cases back in the case-file format.
func writeCases(tb testing.TB, path string, cases []testCase) {
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

// mustRender renders content with r and fails the test on error.
func mustRender(tb testing.TB, r *Renderer, content string) string {
	tb.Helper()
	out, err := r.Render(content)
	if err != nil {
		tb.Fatalf("Render(%q): %v", content, err)
	}
	return out
}

// checkSafe parses out as an HTML fragment and reports everything
// executable: script, style, iframe, object, embed (and other active)
// elements, on* attributes, and href, src, action, formaction, xlink:href or
// srcset values with a scheme other than http, https or mailto; also any
// style attribute.
func checkSafe(out string) []string {
	var problems []string
	nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return []string{"parse: " + err.Error()}
	}
	forbidden := map[string]bool{
		"script": true, "style": true, "iframe": true, "object": true, "embed": true, "frame": true,
		"frameset": true, "applet": true, "base": true, "link": true, "meta": true, "form": true,
		"svg": true, "math": true, "template": true, "noscript": true, "xmp": true,
		"input": true, "button": true, "textarea": true, "select": true,
	}
	urlAttrs := map[string]bool{"href": true, "src": true, "action": true, "formaction": true,
		"xlink:href": true, "srcset": true, "background": true, "poster": true, "cite": true, "data": true}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if forbidden[strings.ToLower(n.Data)] || n.Namespace != "" {
				problems = append(problems, "element <"+n.Data+">")
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				if a.Namespace != "" {
					key = a.Namespace + ":" + key
				}
				switch {
				case strings.HasPrefix(key, "on"):
					problems = append(problems, "attribute "+key+" on <"+n.Data+">")
				case key == "style":
					problems = append(problems, "style attribute on <"+n.Data+">")
				case urlAttrs[key] && !AllowedURL([]byte(strings.TrimSpace(a.Val))):
					problems = append(problems, fmt.Sprintf("%s=%q on <%s>", key, a.Val, n.Data))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return problems
}
