package tui

import (
	"fmt"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

// attachedMsg is a file uploaded with /attach PATH.
type attachedMsg struct {
	upload toolmark.Upload
}

// maxAttachRead bounds the bytes /attach reads of a file (the server has
// its own limit, usually lower, and says so).
const maxAttachRead = 100 << 20

// attach uploads the file at path, to go with the next message. What the
// server says of it (its name is the user's) is sanitised when shown.
func (m *model) attach(path string) tea.Cmd {
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			return noticeMsg{text: "Cannot read " + SanitizeLine(path) + ": not a file."}
		}
		if st.Size() > maxAttachRead {
			return noticeMsg{text: fmt.Sprintf("%s is larger than %d bytes.", SanitizeLine(path), maxAttachRead)}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return noticeMsg{text: "Cannot read " + SanitizeLine(path) + "."}
		}
		ups, err := c.Upload(ctx, client.File{Name: filepath.Base(path), Data: data})
		if err != nil {
			return noticeMsg{err: err}
		}
		return attachedMsg{upload: ups[0]}
	}
}

// attachedLine says which files go with the next message.
func attachedLine(ups []toolmark.Upload) string {
	s := "Attached to your next message:"
	for _, u := range ups {
		s += fmt.Sprintf(" %s (%s, %d bytes);", SanitizeLine(u.Name), SanitizeLine(u.MediaType), u.Size)
	}
	return s[:len(s)-1] + "."
}

// takeAttached returns the ids of the files attached and clears them.
func (m *model) takeAttached() []string {
	ids := make([]string, len(m.attached))
	for i, u := range m.attached {
		ids[i] = u.ID
	}
	m.attached = nil
	return ids
}
