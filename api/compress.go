package api

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5/middleware"
	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"
)

// compressedTypes are the responses compress compresses.
var compressedTypes = []string{
	"text/event-stream", "application/json", "text/markdown", "text/html", "text/css",
	"text/javascript", "application/javascript", "text/plain", "image/svg+xml",
}

// compress compresses the responses of clients that accept it: JSON
// answers, exports, the page's files and event streams, whose frames are
// each flushed compressed as they are written. gzip keeps no state between
// writes (klauspost/compress's stateless mode), so an open stream holds
// about 2 KiB for it instead of the megabyte of a deflate window, and each
// frame — a render frame carries only what its blocks grew by — compresses
// on its own. deflate, for the rare client that accepts it alone, is zlib
// at its fastest level.
func compress() func(http.Handler) http.Handler {
	c := middleware.NewCompressor(1, compressedTypes...)
	c.SetEncoder("deflate", func(w io.Writer, level int) io.Writer {
		z, _ := kzlib.NewWriterLevel(w, level)
		return z
	})
	// Added last, gzip is preferred.
	c.SetEncoder("gzip", func(w io.Writer, _ int) io.Writer {
		z, _ := kgzip.NewWriterLevel(w, kgzip.StatelessCompression)
		return z
	})
	return func(next http.Handler) http.Handler {
		h := c.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get("Accept-Encoding"); strings.Contains(v, ";") {
				r.Header.Set("Accept-Encoding", acceptedCodings(v))
			}
			h.ServeHTTP(w, r)
		})
	}
}

// acceptedCodings returns the codings an Accept-Encoding value accepts,
// without their parameters: "gzip;q=0, deflate;q=0.5" is "deflate". The
// compressor, and a taken-over stream after it (acceptsEncoding), look
// for a coding's name only, so a coding refused with q=0 must not reach
// them.
func acceptedCodings(v string) string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		name, params, _ := strings.Cut(c, ";")
		name = strings.TrimSpace(name)
		if name == "" || refused(params) {
			continue
		}
		out = append(out, name)
	}
	return strings.Join(out, ", ")
}

// refused reports whether a coding's parameters give it a weight of 0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}
