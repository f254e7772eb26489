package tools

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Upserter stores a document of the knowledge base under its source and
// returns its id. The store implements it.
type Upserter interface {
	UpsertDocument(ctx context.Context, source, title, body string) (string, error)
}

// MaxIngestBytes is the largest file Ingest loads.
const MaxIngestBytes = 4 << 20

// Ingest loads every .md, .markdown and .txt file under dir (skipping
// hidden files and directories) into u, without the terminal escape
// sequences (colours, cursor moves) a text file may hold. A document's source is its path
// relative to dir with forward slashes; its title is its first heading, or
// the file name without extension. progress, when not nil, is called after
// each file with its source and the count so far. Ingest returns the number
// of documents stored.
func Ingest(ctx context.Context, u Upserter, dir string, progress func(source string, n int)) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if path != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(name)) {
		case ".md", ".markdown", ".txt":
		default:
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxIngestBytes {
			return fmt.Errorf("%s: larger than %d bytes", path, MaxIngestBytes)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !utf8.Valid(raw) {
			return fmt.Errorf("%s: not UTF-8 text", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		source := filepath.ToSlash(rel)
		// Terminal escape sequences (a log saved with its colours) are not
		// text: left in, they would reach answers as garbage.
		body := ansi.Strip(string(raw))
		if _, err := u.UpsertDocument(ctx, source, Title(body, name), body); err != nil {
			return fmt.Errorf("storing %s: %w", source, err)
		}
		n++
		if progress != nil {
			progress(source, n)
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("ingesting %s: %w", dir, err)
	}
	return n, nil
}

// Title returns the first markdown heading of body, or name without its
// extension.
func Title(body, name string) string {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			if h != "" {
				return h
			}
		}
	}
	return strings.TrimSuffix(name, filepath.Ext(name))
}
