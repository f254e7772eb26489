package runner

import (
	"testing"
	"time"
)

func TestHub(t *testing.T) {
	h := NewHub()
	w := h.Wait("t1", 0)
	select {
	case <-w:
		t.Fatal("woken before any event")
	default:
	}
	h.Publish("t1", 3)
	select {
	case <-w:
	case <-time.After(time.Second):
		t.Fatal("not woken by Publish")
	}
	select {
	case <-h.Wait("t1", 2):
	default:
		t.Error("Wait below the published seq must return a closed channel")
	}
	w = h.Wait("t1", 3)
	h.Publish("t1", 3) // not newer: no wake-up
	h.Publish("t2", 9) // another turn
	select {
	case <-w:
		t.Error("woken by an old seq or another turn")
	default:
	}
	h.Prune(0)
	if len(h.turns) != 0 {
		t.Errorf("Prune(0) left %d turns", len(h.turns))
	}
}

func TestParseEventsPayload(t *testing.T) {
	tests := []struct {
		in   string
		id   string
		seq  int64
		good bool
	}{
		{"0b7c…:17", "0b7c…", 17, true},
		{"a:b:5", "a:b", 5, true},
		{":5", "", 0, false},
		{"abc", "", 0, false},
		{"abc:x", "", 0, false},
	}
	for _, tt := range tests {
		id, seq, ok := parseEventsPayload(tt.in)
		if ok != tt.good || id != tt.id || seq != tt.seq {
			t.Errorf("parseEventsPayload(%q) = %q, %d, %v; want %q, %d, %v", tt.in, id, seq, ok, tt.id, tt.seq, tt.good)
		}
	}
}
