package toolmark

import "net/http"

// MaxToolImages is how many images one tool call may return and the page
// may ask for (GET /api/turns/{id}/tool-calls/{callId}/images/{n}).
const MaxToolImages = 4

// RasterType returns the media type of data sniffed from its bytes when it
// is a PNG, JPEG, GIF or WebP image, else "". Whatever a tool or a file
// name says an image is, only these are kept and served (never SVG or HTML).
func RasterType(data []byte) string {
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}
