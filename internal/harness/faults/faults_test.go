package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func TestReplaceSection(t *testing.T) {
	doc := "# Reliability\n\nprose\n"
	once := replaceSection(doc, "before", "### Before\n\nfigures 1")
	if !strings.Contains(once, "<!-- faults:before:start -->\n\n### Before\n\nfigures 1\n\n<!-- faults:before:end -->") {
		t.Fatalf("appended section missing:\n%s", once)
	}
	twice := replaceSection(once+"\nafter the section\n", "before", "### Before\n\nfigures 2")
	if strings.Contains(twice, "figures 1") || !strings.Contains(twice, "figures 2") || !strings.Contains(twice, "after the section") {
		t.Fatalf("section not replaced in place:\n%s", twice)
	}
	other := replaceSection(twice, "after", "### After")
	if !strings.Contains(other, "figures 2") || strings.Count(other, ":start -->") != 2 {
		t.Fatalf("a second section must not touch the first:\n%s", other)
	}
}

func TestReport(t *testing.T) {
	r := &Report{Duration: time.Minute, Seed: 7}
	r.atMost("kill", "turns not final", 3, 0, "3 queued with no lease")
	r.atMost("kill", "rows without events", 0, 0, "ignored when it passes")
	r.skip("pgrestart", "5xx", "needs the embedded server")
	r.figure("kill", "rounds", "%d", 4)
	r.atLeast("takeover", "turns running at the kill", 0, 1, "nothing was tested")
	r.atLeast("takeover", "turns taken over", 3, 1, "ignored when it passes")
	if !r.Failed() {
		t.Fatal("Failed got false with a failed criterion")
	}
	if r.Criteria[1].Detail != "" || r.Criteria[4].Detail != "" {
		t.Errorf("a passed criterion keeps detail %q, %q", r.Criteria[1].Detail, r.Criteria[4].Detail)
	}
	if got := []Status{r.Criteria[3].Status, r.Criteria[4].Status}; got[0] != Fail || got[1] != Pass {
		t.Errorf("at least 1 of 0 and of 3: got %v, want FAIL, PASS", got)
	}
	var b bytes.Buffer
	r.WriteTable(&b)
	for _, want := range []string{"turns not final", "FAIL", "PASS", "SKIP", "3 queued with no lease", "nothing was tested", "2 failed", "seed 7"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	md := r.Markdown("Before the fixes", "go run ./cmd/toolmark-faults --preset full")
	for _, want := range []string{"### Before the fixes", "| kill | turns not final | 3 | ≤ 0 | FAIL |", "| kill | rounds | 4 |", "needs the embedded server", "| takeover | turns running at the kill | 0 | ≥ 1 | FAIL |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// ev builds a frame of a tool_call_* or terminal event.
func ev(seq int64, typ toolmark.EventType, callID, status string) frame {
	var data any = toolmark.ToolCallData{ToolCallID: callID, Status: status}
	if typ.Terminal() {
		data = toolmark.TurnEndData{Status: toolmark.TurnStatus(status)}
	}
	raw, _ := json.Marshal(data)
	e, _ := json.Marshal(toolmark.Event{Seq: seq, Type: typ, Data: raw})
	return frame{Seq: seq, Type: typ, Data: string(e)}
}

func TestAuditToolCalls(t *testing.T) {
	tag := func(id string, st toolcallmarkup.Status) string {
		return toolcallmarkup.Markup(toolcallmarkup.ToolCall{ID: id, Type: "search_documents", Status: st})
	}
	log := []frame{
		ev(1, toolmark.EventToolCallStarted, "c1", "pending"),
		ev(2, toolmark.EventToolCallRunning, "c1", "running"),
		ev(3, toolmark.EventToolCallSuccess, "c1", "success"),
		ev(4, toolmark.EventTurnCompleted, "", "completed"),
	}
	final := toolmark.Turn{Status: toolmark.TurnCompleted}
	tests := []struct {
		name               string
		st                 client.TurnState
		log                []frame
		noEvents, disagree int
	}{
		{"agree", client.TurnState{Turn: final, Content: tag("c1", "success"),
			ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Status: "success"}}}, log, 0, 0},
		{"row without events", client.TurnState{Turn: final, Content: tag("c1", "success"),
			ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Status: "success"}, {ID: "c2", Status: "error"}}}, log, 1, 0},
		{"row status differs", client.TurnState{Turn: final, Content: tag("c1", "success"),
			ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Status: "error"}}}, log, 0, 1},
		{"no row", client.TurnState{Turn: final, Content: tag("c1", "success")}, log, 0, 1},
		{"tag differs", client.TurnState{Turn: final, Content: tag("c1", "running"),
			ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Status: "success"}}}, log, 0, 1},
		{"running turn: only rows are checked", client.TurnState{Turn: toolmark.Turn{Status: toolmark.TurnRunning},
			ToolCalls: []toolmark.ToolCallRecord{{ID: "c1", Status: "running"}}}, log[:2], 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := auditToolCalls(tt.st, tt.log)
			if len(a.rowsWithoutEvents) != tt.noEvents || len(a.disagreements) != tt.disagree {
				t.Errorf("got %d rows without events %v, %d disagreements %v; want %d, %d",
					len(a.rowsWithoutEvents), a.rowsWithoutEvents, len(a.disagreements), a.disagreements, tt.noEvents, tt.disagree)
			}
		})
	}
}

func TestCompareWithLog(t *testing.T) {
	log := []frame{{Seq: 1, Data: "a"}, {Seq: 2, Data: "b"}, {Seq: 3, Data: "c"}}
	tests := []struct {
		name               string
		got                []frame
		missing, different int
	}{
		{"same", log, 0, 0},
		{"prefix", log[:2], 0, 0},
		{"changed", []frame{{Seq: 1, Data: "a"}, {Seq: 2, Data: "B"}}, 0, 1},
		{"lost", []frame{{Seq: 4, Data: "d"}}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, d := compareWithLog(tt.got, log)
			if m != tt.missing || d != tt.different {
				t.Errorf("got %d missing %d different, want %d %d", m, d, tt.missing, tt.different)
			}
		})
	}
}

func TestStallOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	f := &follower{frames: []frame{
		{Seq: 1, Time: at(0), At: at(0.02)},   // before the SIGTERM: ignored
		{Seq: 2, Time: at(1.1), At: at(1.15)}, // 50 ms
		{Seq: 3, Time: at(1.2), At: at(4.2)},  // frozen for 3 s
		{Seq: 4, Time: at(0.9), At: at(1.3)},  // written before the SIGTERM at 1 s: counted from it
	}, done: true}
	got, n := stallOf(f, at(1), at(10))
	if got != 3*time.Second || n != 3 {
		t.Errorf("got %v over %d events, want 3s over 3", got, n)
	}
	f.done = false
	if got, _ := stallOf(f, at(1), at(10)); got != time.Duration(8.8*float64(time.Second)) {
		t.Errorf("without the terminal event got %v, want 8.8s (until the end)", got)
	}
}

func TestRouteOf(t *testing.T) {
	id := "3bec91f3-d735-4a5c-890c-b87607d09d9c"
	if got, want := routeOf(fmt.Sprintf("/api/conversations/%s/turns", id)), "/api/conversations/{id}/turns"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
