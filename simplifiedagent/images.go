package simplifiedagent

import (
	"context"
	"strconv"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// Limits of the images a tool call may return (AttachImage).
const (
	MaxToolImages     = toolmark.MaxToolImages
	MaxToolImageBytes = 512 << 10 // all of a call's images together
)

// AttachImage hands an image the tool call whose context ctx is returned to
// its tool_call_success event, where the page shows it in the call's
// details. It reports whether the image was kept: only a raster image
// (toolmark.RasterType), at most MaxToolImages per call and MaxToolImageBytes in all,
// of a call that is still running.
func AttachImage(ctx context.Context, data []byte) bool {
	ci := callFromContext(ctx)
	mt := toolmark.RasterType(data)
	if ci == nil || mt == "" {
		return false
	}
	return ci.s.attachImage(ci.c, toolmark.ToolImage{MediaType: mt, Data: append([]byte(nil), data...)})
}

func (s *session) attachImage(c *call, img toolmark.ToolImage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := len(img.Data)
	for _, i := range c.images {
		size += len(i.Data)
	}
	if s.closed || c.status.Final() || len(c.images) >= MaxToolImages || size > MaxToolImageBytes {
		return false
	}
	c.images = append(c.images, img)
	return true
}

// imageAttrs is the images attribute of a call that returned images.
func imageAttrs(c *call) []toolcallmarkup.Attr {
	if len(c.images) == 0 {
		return nil
	}
	return []toolcallmarkup.Attr{{Key: "images", Value: strconv.Itoa(len(c.images))}}
}

// ToolResultImagesModel is a model whose provider takes images in tool
// results (Anthropic's messages API does). The loop sends such a model the
// images a call returned (AttachImage) as llms.BinaryContent parts right
// after the call's llms.ToolCallResponse; other models get only the text,
// in which a tool describes its images.
type ToolResultImagesModel interface {
	ToolResultImages() bool
}

// toolResultParts is what the model gets of a finished call.
func (l *loop) toolResultParts(c *call) []llms.ContentPart {
	parts := []llms.ContentPart{llms.ToolCallResponse{ToolCallID: c.modelID, Name: c.name, Content: c.modelResult()}}
	m, ok := l.req.Model.(ToolResultImagesModel)
	if !ok || !m.ToolResultImages() || c.status != toolcallmarkup.StatusSuccess {
		return parts
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for _, img := range c.images {
		parts = append(parts, llms.BinaryContent{MIMEType: img.MediaType, Data: img.Data})
	}
	return parts
}
