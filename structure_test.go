package toolmark_test

import (
	"bufio"
	"fmt"
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
// packages stay pure, each layer imports only what is below it, mains live
// in cmd/, and files (tests included) and functions stay small enough to
// read.
func TestStructure(t *testing.T) {
	for _, v := range checkStructure(t, ".") {
		t.Error(v)
	}
}

// importRule is what the non-test files of one package may import: std
// says standard library only (every import checked, the module's packages
// included); deny lists the module's packages it must not import ("" is
// the root, a trailing "/" a whole folder); allow, when not nil, is the
// only packages of the module it may import.
type importRule struct {
	std   bool
	deny  []string
	allow []string
}

// importRules are the rules of docs/architecture.md, by package directory.
var importRules = map[string]importRule{
	".":              {std: true}, // the root: domain types
	"toolcallmarkup": {std: true},
	"statustext":     {allow: []string{"toolcallmarkup"}},
	"turnstate":      {allow: []string{"", "statustext", "toolcallmarkup"}},
	"markdown":       {allow: []string{"statustext", "toolcallmarkup"}},
	"liveview":       {allow: []string{"", "markdown", "statustext", "toolcallmarkup", "turnstate"}},
	"fanout":         {allow: []string{"", "internal/sse", "liveview", "markdown", "statustext", "toolcallmarkup", "turnstate"}},
	"store":          {deny: []string{"statustext", "turnstate", "markdown", "liveview", "fanout", "runner", "api", "client", "tui", "simplifiedagent/", "internal/"}},
	"runner":         {deny: []string{"api", "client", "tui", "markdown", "liveview", "simplifiedagent/", "internal/"}},
	"api":            {deny: []string{"client", "tui", "simplifiedagent/", "internal/app"}},
	"client":         {allow: []string{"", "statustext", "toolcallmarkup", "turnstate"}},
}

// checkStructure walks the tree at root and returns every rule it breaks.
func checkStructure(t *testing.T, root string) []string {
	t.Helper()
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".js") && strings.Contains(path, filepath.Join("web", "static")) && !strings.Contains(path, "vendor"):
			if n := lines(t, path); n > 400 {
				bad = append(bad, fmt.Sprintf("%s: %d lines; a JS file has at most 400", rel, n))
			}
			return nil
		case !strings.HasSuffix(path, ".go"):
			return nil
		}
		if n := lines(t, path); n > 500 {
			bad = append(bad, fmt.Sprintf("%s: %d lines; a Go file has at most 500", rel, n))
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil // the rules below are of the code, not of its tests
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if f.Name.Name == "main" && (dir == "internal" || strings.HasPrefix(dir, "internal/")) {
			bad = append(bad, fmt.Sprintf("%s: package main under internal/; mains live in cmd/", rel))
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if why := importBreaks(dir, p); why != "" {
				bad = append(bad, fmt.Sprintf("%s: package %s imports %s; %s", rel, dir, p, why))
			}
		}
		bad = append(bad, longFuncs(fset, rel, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// harness is the folder of the test and load harness: only commands and
// the harness itself import it from code (tests may).
const harness = "internal/harness/"

// importBreaks says which rule of dir the import of path p breaks, or "".
func importBreaks(dir, p string) string {
	if strings.HasPrefix(p, module+"/"+harness) && !strings.HasPrefix(dir+"/", harness) && !strings.HasPrefix(dir, "cmd/") {
		return "only commands and the harness import the harness"
	}
	rule, ok := importRules[dir]
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(p, "/")
	if rule.std && strings.Contains(first, ".") {
		return "it imports the standard library only"
	}
	if p != module && !strings.HasPrefix(p, module+"/") {
		return ""
	}
	own := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
	if rule.allow != nil && !slices.Contains(rule.allow, own) {
		return fmt.Sprintf("of the module it imports only %q", rule.allow)
	}
	for _, d := range rule.deny {
		if own == d || strings.HasSuffix(d, "/") && (strings.HasPrefix(own, d) || own+"/" == d) {
			return "that is above it"
		}
	}
	return ""
}

// longFuncs returns the functions of f over 100 lines: declared ones, and
// function literals held by package-level variables.
func longFuncs(fset *token.FileSet, rel string, f *ast.File) []string {
	var bad []string
	length := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Body != nil && length(decl) > 100 {
				bad = append(bad, fmt.Sprintf("%s: func %s has %d lines; a function has at most 100", rel, decl.Name.Name, length(decl)))
			}
		case *ast.GenDecl:
			ast.Inspect(decl, func(n ast.Node) bool {
				if fl, ok := n.(*ast.FuncLit); ok && length(fl) > 100 {
					bad = append(bad, fmt.Sprintf("%s:%d: a function literal has %d lines; a function has at most 100", rel, fset.Position(fl.Pos()).Line, length(fl)))
				}
				return true
			})
		}
	}
	return bad
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
