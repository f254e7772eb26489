package api

import (
	"io"
	"net/http"

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
	return c.Handler
}
