package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

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

// takeAttached returns the files attached and clears them.
func (m *model) takeAttached() []toolmark.Upload {
	ups := m.attached
	m.attached = nil
	return ups
}

// giveBack attaches again the files of a message the server refused,
// before any attached since.
func (m *model) giveBack(ups []toolmark.Upload) {
	if len(ups) > 0 {
		m.attached = append(slices.Clone(ups), m.attached...)
	}
}

// withFiles says, after "your message is back in the composer", that its
// files are still attached.
func withFiles(ups []toolmark.Upload) string {
	switch len(ups) {
	case 0:
		return ""
	case 1:
		return ", its file still attached"
	}
	return fmt.Sprintf(", its %d files still attached", len(ups))
}

// uploadIDs are the ids of files.
func uploadIDs(ups []toolmark.Upload) []string {
	ids := make([]string, len(ups))
	for i, u := range ups {
		ids[i] = u.ID
	}
	return ids
}
