package runner

import "testing"

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
