package faults

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Status is the outcome of a criterion.
type Status string

// The outcomes of a criterion. A skipped criterion could not be checked
// (PostgreSQL restarts need the embedded server) and does not fail a run.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Criterion is one checked property: what was measured against its bound.
type Criterion struct {
	Scenario string
	Name     string
	Measured string
	Bound    string
	Status   Status
	Detail   string // what failed, for the engineer fixing it
}

// Figure is a measured number that is not a criterion by itself.
type Figure struct {
	Scenario string
	Name     string
	Value    string
}

// Report is what Run found.
type Report struct {
	Started  time.Time
	Duration time.Duration
	Seed     uint64

	mu       sync.Mutex
	Criteria []Criterion
	Figures  []Figure
}

func (r *Report) add(c Criterion) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Criteria = append(r.Criteria, c)
}

// check adds a criterion that passes when ok.
func (r *Report) check(scenario, name string, ok bool, measured, bound, detail string) {
	st := Pass
	if !ok {
		st = Fail
	}
	r.add(Criterion{Scenario: scenario, Name: name, Measured: measured, Bound: bound, Status: st, Detail: detail})
}

// atMost adds a criterion "n ≤ bound".
func (r *Report) atMost(scenario, name string, n, bound int, detail string) {
	if n <= bound {
		detail = ""
	}
	r.check(scenario, name, n <= bound, fmt.Sprint(n), fmt.Sprintf("≤ %d", bound), detail)
}

// atLeast adds a criterion "n ≥ bound": that something was tested at all.
func (r *Report) atLeast(scenario, name string, n, bound int, detail string) {
	if n >= bound {
		detail = ""
	}
	r.check(scenario, name, n >= bound, fmt.Sprint(n), fmt.Sprintf("≥ %d", bound), detail)
}

// skip adds a criterion that could not be checked.
func (r *Report) skip(scenario, name, why string) {
	r.add(Criterion{Scenario: scenario, Name: name, Measured: "—", Bound: "—", Status: Skip, Detail: why})
}

func (r *Report) figure(scenario, name, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Figures = append(r.Figures, Figure{Scenario: scenario, Name: name, Value: fmt.Sprintf(format, args...)})
}

// Failed reports whether any criterion failed.
func (r *Report) Failed() bool {
	return slices.ContainsFunc(r.Criteria, func(c Criterion) bool { return c.Status == Fail })
}

// WriteTable writes the criteria and the figures as aligned text tables,
// then one line per failed criterion with what failed.
func (r *Report) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tCRITERION\tMEASURED\tBOUND\tRESULT")
	for _, c := range r.Criteria {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Scenario, c.Name, c.Measured, c.Bound, c.Status)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIGURE\tVALUE")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Scenario, f.Name, f.Value)
	}
	tw.Flush()
	failed := 0
	for _, c := range r.Criteria {
		if c.Status == Fail {
			failed++
			if failed == 1 {
				fmt.Fprintln(w, "\nFailed criteria:")
			}
			fmt.Fprintf(w, "- %s: %s: %s (bound %s)", c.Scenario, c.Name, c.Measured, c.Bound)
			if c.Detail != "" {
				fmt.Fprintf(w, " — %s", c.Detail)
			}
			fmt.Fprintln(w)
		}
	}
	passed, skipped := 0, 0
	for _, c := range r.Criteria {
		switch c.Status {
		case Pass:
			passed++
		case Skip:
			skipped++
		}
	}
	fmt.Fprintf(w, "\n%d criteria: %d passed, %d failed, %d skipped (%s, seed %d)\n",
		len(r.Criteria), passed, failed, skipped, r.Duration.Round(time.Second), r.Seed)
}

// Markdown returns the report as a section of docs/reliability.md: a
// heading with label, how it was run, and the two tables.
func (r *Report) Markdown(label, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", label)
	fmt.Fprintf(&b, "Measured %s on %d cores (%s/%s), %s, seed %d:\n\n",
		r.Started.UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, r.Duration.Round(time.Second), r.Seed)
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", command)
	b.WriteString("| scenario | criterion | measured | bound | result |\n|---|---|---|---|---|\n")
	for _, c := range r.Criteria {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Scenario, mdCell(c.Name), mdCell(c.Measured), mdCell(c.Bound), c.Status)
	}
	b.WriteString("\n| scenario | figure | value |\n|---|---|---|\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Scenario, mdCell(f.Name), mdCell(f.Value))
	}
	var details []string
	for _, c := range r.Criteria {
		if c.Status != Pass && c.Detail != "" {
			details = append(details, fmt.Sprintf("- **%s, %s**: %s", c.Scenario, c.Name, mdCell(c.Detail)))
		}
	}
	if len(details) > 0 {
		b.WriteString("\nWhat failed or was skipped:\n\n" + strings.Join(details, "\n") + "\n")
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteDoc puts section into the file at path between the lines
// "<!-- faults:NAME:start -->" and "<!-- faults:NAME:end -->", replacing what
// was there, or appends it with those markers when they are missing.
func WriteDoc(path, name, section string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := replaceSection(string(b), name, section)
	return os.WriteFile(path, []byte(doc), 0o644)
}

func replaceSection(doc, name, section string) string {
	start, end := "<!-- faults:"+name+":start -->", "<!-- faults:"+name+":end -->"
	block := start + "\n\n" + strings.TrimSpace(section) + "\n\n" + end
	i := strings.Index(doc, start)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	}
	return doc[:i] + block + doc[j+len(end):]
}

// ms writes a duration in milliseconds below 10 s and in seconds above.
func ms(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
