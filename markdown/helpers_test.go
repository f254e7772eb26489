package markdown

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var update = flag.Bool("update", false, "rewrite the expected HTML of the case files in testdata")

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
