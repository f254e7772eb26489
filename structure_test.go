package toolmark_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/toolmark/toolmark"

// TestStructure holds the layout rules of docs/architecture.md: pure
// packages stay pure, mains live in cmd/, and files (tests included) and
// functions stay small enough to read.
func TestStructure(t *testing.T) {
	fset := token.NewFileSet()
	imports := map[string][]string{} // package dir → module imports of its non-test files
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && path != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".js") && strings.Contains(path, filepath.Join("web", "static")) && !strings.Contains(path, "vendor"):
			if n := lines(t, path); n > 400 {
				t.Errorf("%s: %d lines; a JS file has at most 400", path, n)
			}
			return nil
		case !strings.HasSuffix(path, ".go"):
			return nil
		}
		if n := lines(t, path); n > 500 {
			t.Errorf("%s: %d lines; a Go file has at most 500", path, n)
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil // the rules below are of the code, not of its tests
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if f.Name.Name == "main" && (dir == "internal" || strings.HasPrefix(dir, "internal/")) {
			t.Errorf("%s: package main under internal/; mains live in cmd/", path)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == module || strings.HasPrefix(p, module+"/") {
				imports[dir] = append(imports[dir], strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
			}
		}
		full, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range full.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 100 {
					t.Errorf("%s: func %s has %d lines; a function has at most 100", path, fd.Name.Name, n)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string][]string{
		".":              {"*"}, // the root: domain types, standard library only
		"toolcallmarkup": {"*"},
		"statustext":     {"", "turnstate", "store", "markdown"},
		"markdown":       {"", "turnstate", "store", "liveview", "fanout"},
		"store":          {"statustext", "turnstate", "markdown", "runner", "api"},
		"turnstate":      {"store", "runner", "api", "markdown"},
	}
	for dir, bad := range forbidden {
		for _, im := range imports[dir] {
			name := im
			if name == "" {
				name = "the root package"
			}
			if slices.Contains(bad, "*") || slices.Contains(bad, im) {
				t.Errorf("package %s imports %s", dir, name)
			}
		}
	}
}

func lines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
	}
	return n
}
