// Package web is the toolmark web page: plain HTML, CSS and JavaScript files
// with no build step, embedded in the binary and served by Handler.
//
// The page lists conversations, shows messages with the server's rendered
// HTML, and follows live turns over EventSource with ?render=html: the
// answer arrives as blocks of HTML rendered by package markdown (the same
// renderer and policy as stored messages), which the page morphs into
// place. /highlight.css is the stylesheet of highlighted code, made by
// package markdown. docs/clients.md describes it.
package web

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/toolmark/toolmark/markdown"
)

//go:embed static
var static embed.FS

// ContentSecurityPolicy is the Content-Security-Policy header of every
// answer of Handler: scripts, styles and connections from the page's own
// origin only, no inline code, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// contentTypes are the types of the files the page is made of; anything
// else is served as application/octet-stream.
var contentTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".json":  "application/json",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
}

// Handler serves the page: index.html at "/" and the static assets by
// path, each with its content type and the security headers. Unknown paths
// are 404s; only GET and HEAD are allowed.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return &handler{files: sub}
}

type handler struct{ files fs.FS }

// highlightCSS is the stylesheet of highlighted code (/highlight.css): the
// classes package markdown writes.
var highlightCSS = sync.OnceValue(markdown.HighlightStylesheet)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(h.files, name)
	if name == "highlight.css" {
		b, err = []byte(highlightCSS()), nil
	}
	if err != nil || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	ct := contentTypes[path.Ext(name)]
	if ct == "" {
		if ct = mime.TypeByExtension(path.Ext(name)); ct == "" {
			ct = "application/octet-stream"
		}
	}
	hdr.Set("Content-Type", ct)
	hdr.Set("Cache-Control", "no-cache") // small files: revalidate, so an upgrade shows at once
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}
