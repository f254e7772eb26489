package toolcallmarkup

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected results of the conformance vectors in ../testdata/toolcallmarkup")

// vectorDir holds the conformance vectors, shared with other
// implementations of the format. docs/markup.md describes their format.
const vectorDir = "../testdata/toolcallmarkup"

type vectorFile struct {
	Description string   `json:"description,omitempty"`
	Vectors     []vector `json:"vectors"`
}

type vector struct {
	Name         string      `json:"name"`
	Initial      string      `json:"initial"`
	InitialHex   string      `json:"initialHex,omitempty"`
	InitialError string      `json:"initialError,omitempty"`
	Operations   []operation `json:"operations"`
	Expected     string      `json:"expected"`
	Calls        []vcall     `json:"calls"`
}

type operation struct {
	Op        string          `json:"op"`
	Text      string          `json:"text,omitempty"`
	TextHex   string          `json:"textHex,omitempty"`
	Call      *vcall          `json:"call,omitempty"`
	ID        string          `json:"id,omitempty"`
	Update    *vupdate        `json:"update,omitempty"`
	Status    string          `json:"status,omitempty"`
	ErrorText string          `json:"errorText,omitempty"`
	Returns   json.RawMessage `json:"returns,omitempty"`
	Error     string          `json:"error,omitempty"`
}

type vcall struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Status   string  `json:"status"`
	ParentID string  `json:"parentId,omitempty"`
	Attrs    []vattr `json:"attrs,omitempty"`
	Error    string  `json:"error,omitempty"`
}

type vattr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type vupdate struct {
	Status string  `json:"status,omitempty"`
	Error  string  `json:"error,omitempty"`
	Extra  []vattr `json:"extra,omitempty"`
}

func (c vcall) toolCall() ToolCall {
	return ToolCall{ID: c.ID, Type: c.Type, Status: Status(c.Status), ParentID: c.ParentID, Error: c.Error, Attrs: attrsOf(c.Attrs)}
}

func attrsOf(vs []vattr) []Attr {
	var out []Attr
	for _, a := range vs {
		out = append(out, Attr{a.Key, a.Value})
	}
	return out
}

func vcallOf(tc ToolCall) vcall {
	c := vcall{ID: tc.ID, Type: tc.Type, Status: string(tc.Status), ParentID: tc.ParentID, Error: tc.Error}
	for _, a := range tc.Attrs {
		c.Attrs = append(c.Attrs, vattr{a.Key, a.Value})
	}
	return c
}

func (u *vupdate) update() Update {
	if u == nil {
		return Update{}
	}
	return Update{Status: Status(u.Status), Error: u.Error, Extra: attrsOf(u.Extra)}
}

// text returns a text given as "text" or, for bytes that JSON cannot hold
// (invalid UTF-8), as "textHex".
func decodeText(tb testing.TB, text, hexText string) string {
	tb.Helper()
	if hexText == "" {
		return text
	}
	b, err := hex.DecodeString(hexText)
	if err != nil {
		tb.Fatalf("bad hex %q: %v", hexText, err)
	}
	return string(b)
}

func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes()))
}

func loadVectors(tb testing.TB) map[string]*vectorFile {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no conformance vectors in %s: %v", vectorDir, err)
	}
	files := make(map[string]*vectorFile)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var f vectorFile
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		files[p] = &f
	}
	return files
}

// runVector applies the operations of v and returns v with the results it
// observed in place of the expected ones.
func runVector(t *testing.T, v vector) vector {
	got := v
	got.Operations = append([]operation{}, v.Operations...)
	got.Calls = []vcall{}
	d, err := NewDocument(decodeText(t, v.Initial, v.InitialHex))
	got.InitialError = errKind(err)
	if err != nil {
		got.Expected = ""
		return got
	}
	for i := range got.Operations {
		op := &got.Operations[i]
		var ret any
		var err error
		switch op.Op {
		case "append":
			ret = d.AppendText(decodeText(t, op.Text, op.TextHex))
		case "flush":
			ret = d.Flush()
		case "start":
			if op.Call == nil {
				t.Fatalf("operation %d: start without call", i)
			}
			ret, err = d.Start(op.Call.toolCall())
		case "update":
			ret, err = d.Update(op.ID, op.Update.update())
		case "finalize":
			ids := d.Finalize(Status(op.Status), op.ErrorText)
			if ids == nil {
				ids = []string{}
			}
			ret = ids
		case "rewrite":
			var out string
			out, err = Rewrite(d.String(), op.ID, op.Update.update())
			if err == nil {
				d = mustDocument(t, out)
			} else if out != d.String() {
				t.Errorf("operation %d: Rewrite changed the content on error", i)
			}
		default:
			t.Fatalf("operation %d: unknown op %q", i, op.Op)
		}
		op.Error = errKind(err)
		if ret != nil && err == nil {
			op.Returns = marshal(ret)
		} else {
			op.Returns = nil
		}
		if d.Len() != len(d.String()) {
			t.Errorf("operation %d: Len got %d, want %d", i, d.Len(), len(d.String()))
		}
	}
	got.Expected = d.String()
	for _, tc := range Parse(got.Expected) {
		got.Calls = append(got.Calls, vcallOf(tc))
	}
	if r := mustDocument(t, got.Expected); r.String() != got.Expected {
		t.Errorf("NewDocument(expected).String() got %q, want %q", r.String(), got.Expected)
	}
	return got
}

func TestConformanceVectors(t *testing.T) {
	files := loadVectors(t)
	total := 0
	for path, f := range files {
		names := make(map[string]bool)
		for i, v := range f.Vectors {
			total++
			if names[v.Name] {
				t.Errorf("%s: duplicate vector name %q", path, v.Name)
			}
			names[v.Name] = true
			t.Run(strings.TrimSuffix(filepath.Base(path), ".json")+"/"+v.Name, func(t *testing.T) {
				got := runVector(t, v)
				if *update {
					f.Vectors[i] = got
					return
				}
				if got.InitialError != v.InitialError {
					t.Fatalf("NewDocument error got %q, want %q", got.InitialError, v.InitialError)
				}
				for j, op := range got.Operations {
					want := v.Operations[j]
					if op.Error != want.Error {
						t.Errorf("operation %d (%s): error got %q, want %q", j, op.Op, op.Error, want.Error)
					}
					if !jsonEqual(op.Returns, want.Returns) {
						t.Errorf("operation %d (%s): returns got %s, want %s", j, op.Op, op.Returns, want.Returns)
					}
				}
				if got.Expected != v.Expected {
					t.Errorf("content got %q, want %q", got.Expected, v.Expected)
				}
				if !reflect.DeepEqual(got.Calls, v.Calls) {
					t.Errorf("calls got %+v, want %+v", got.Calls, v.Calls)
				}
			})
		}
		if *update {
			b := marshalIndent(t, f)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total < 40 {
		t.Errorf("got %d vectors, want at least 40", total)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func marshalIndent(tb testing.TB, v any) []byte {
	tb.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
