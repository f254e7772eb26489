package toolcallmarkup

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The inputs of BenchmarkUpdate, BenchmarkRewrite and BenchmarkNaiveRewrite:
// assistant messages of 10 KB, 1 MB and 10 MB holding 10, 1 000 and 5 000
// running tags spread evenly through the text. A tag takes about 110 bytes,
// so 1 000 and 5 000 tags do not fit in 10 KB: those messages are as large
// as their tags require (plus a little text between them), and their
// sub-benchmark is named after that real size (size=131KB, size=653KB).
var (
	benchSizes = []int{10 << 10, 1 << 20, 10 << 20}
	benchTags  = []int{10, 1000, 5000}
)

const benchPara = "The quick brown fox — jumps over the lazy dog; résumé, naïve café. 1 < 2 & 3 > 2, `code`.\n"

// benchText returns n bytes of plain text, cut on a rune boundary.
func benchText(n int) string {
	if n <= 0 {
		return ""
	}
	s := strings.Repeat(benchPara, n/len(benchPara)+1)
	return Truncate(s, n)
}

func benchID(i int) string { return "call_" + strconv.Itoa(i) }

func benchCall(i int) ToolCall {
	return ToolCall{ID: benchID(i), Type: "search_documents", Status: StatusRunning,
		Attrs: []Attr{{"query", "go generics benchmark " + strconv.Itoa(i)}, {"n", "a"}}}
}

type benchInput struct {
	name    string
	content string
	tags    int
}

var (
	benchOnce   sync.Once
	benchInputs []benchInput
)

// inputs builds the benchmark messages once, with a Document, as a turn
// would: text, a tag, text, and so on.
func inputs(tb testing.TB) []benchInput {
	benchOnce.Do(func() {
		for _, size := range benchSizes {
			for _, tags := range benchTags {
				tagBytes := 0
				for i := 0; i < tags; i++ {
					tagBytes += len(Markup(benchCall(i)))
				}
				text := max(size-tagBytes, 16*(tags+1))
				per := text / (tags + 1)
				d, err := NewDocument("")
				if err != nil {
					panic(err)
				}
				for i := 0; i < tags; i++ {
					d.AppendText(benchText(per))
					if _, err := d.Start(benchCall(i)); err != nil {
						panic(err)
					}
				}
				d.AppendText(benchText(text - per*tags))
				d.Flush()
				content := d.String()
				benchInputs = append(benchInputs, benchInput{
					name:    fmt.Sprintf("size=%s/tags=%d", sizeName(size, len(content)), tags),
					content: content,
					tags:    tags,
				})
			}
		}
	})
	return benchInputs
}

// sizeName names a message by its nominal size, or by its real size when
// the tags made it larger.
func sizeName(nominal, real int) string {
	if real <= nominal+nominal/10 {
		if nominal >= 1<<20 {
			return strconv.Itoa(nominal>>20) + "MB"
		}
		return strconv.Itoa(nominal>>10) + "KB"
	}
	return strconv.Itoa((real+1<<9)>>10) + "KB"
}

// cpuMeter reports the CPU time per operation of a benchmark loop as
// "cpu-ns/op" beside the wall time of ns/op.
type cpuMeter struct {
	start int64
	ok    bool
}

func startCPU(b *testing.B) cpuMeter {
	b.ResetTimer()
	t, ok := cpuTime()
	return cpuMeter{start: t, ok: ok}
}

func (m cpuMeter) stop(b *testing.B) {
	b.StopTimer()
	if t, ok := cpuTime(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(t-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// benchUpdates returns the two updates a benchmark alternates between for
// a running tag: the status rule never stops them and each changes the tag.
func benchUpdates() [2]Update {
	return [2]Update{
		{Extra: []Attr{{"n", "b"}}},
		{Extra: []Attr{{"n", "a"}}},
	}
}

// BenchmarkUpdate measures one Document.Update of a tag in a message that
// is already built: the cost a live turn pays at every tool status change.
// It must not grow with the size of the message.
func BenchmarkUpdate(b *testing.B) {
	for _, in := range inputs(b) {
		b.Run(in.name, func(b *testing.B) {
			d := mustDocument(b, in.content)
			ids := make([]string, in.tags)
			for i := range ids {
				ids[i] = benchID(i)
			}
			ups := benchUpdates()
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				k := i % in.tags
				if _, err := d.Update(ids[k], ups[(i/in.tags)%2]); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(in.content))/(1<<20), "content-MB")
			if d.Len() != len(d.String()) {
				b.Fatalf("Len got %d, want %d", d.Len(), len(d.String()))
			}
		})
	}
}

// BenchmarkRewrite measures this package's Rewrite on the message as a
// string: linear in its length, for readers that hold no Document.
func BenchmarkRewrite(b *testing.B) {
	for _, in := range inputs(b) {
		b.Run(in.name, func(b *testing.B) {
			content := in.content
			ups := benchUpdates()
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				var err error
				content, err = Rewrite(content, benchID(i%in.tags), ups[(i/in.tags)%2])
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(in.content))/(1<<20), "content-MB")
		})
	}
}

// BenchmarkNaiveRewrite measures what other chat apps do at every tool
// status change: a regular expression over the whole message to find the
// tag by its id, then a string replace. It is the baseline BenchmarkUpdate
// is compared with.
func BenchmarkNaiveRewrite(b *testing.B) {
	for _, in := range inputs(b) {
		b.Run(in.name, func(b *testing.B) {
			content := in.content
			vals := [2]string{"b", "a"}
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				k := i % in.tags
				re := regexp.MustCompile(`<ToolCall[^>]*toolCallId="` + regexp.QuoteMeta(benchID(k)) + `"[^>]*>`)
				old := re.FindString(content)
				if old == "" {
					b.Fatalf("tag %d not found", k)
				}
				tc := benchCall(k)
				tc.Attrs[1].Value = vals[(i/in.tags)%2]
				content = strings.Replace(content, old, OpenTag(tc), 1)
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(in.content))/(1<<20), "content-MB")
		})
	}
}

// BenchmarkAppendText measures the neutralisation of streamed text, in
// chunks of the size a model streams.
func BenchmarkAppendText(b *testing.B) {
	text := benchText(64<<10) + strings.Join(hostile, "")
	chunks := make([]string, 0, len(text)/16+1)
	for rest := text; rest != ""; {
		n := min(16, len(rest))
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d, _ := NewDocument("")
		for _, c := range chunks {
			d.AppendText(c)
		}
		d.Flush()
	}
}

// BenchmarkAppendNeutralised streams answers of growing length into a
// turn's document in chunks of 16 bytes, as the turn state applies a live
// turn's text deltas: the cost of a chunk (ns/chunk) must not grow with the
// answer.
func BenchmarkAppendNeutralised(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("answer=%dKB", size>>10), func(b *testing.B) {
			text := strings.Repeat("word ", size/5) // prose: no '<' to stop a backward search
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d, err := NewDocument("")
				if err != nil {
					b.Fatal(err)
				}
				for rest := text; rest != ""; {
					n := min(16, len(rest))
					d.AppendNeutralised(rest[:n])
					rest = rest[n:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64((len(text)+15)/16), "ns/chunk")
		})
	}
}
