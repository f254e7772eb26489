package mcptools

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestToolNames: every name offered is valid for every provider, unique
// (across servers and built-ins), and stable.
func TestToolNames(t *testing.T) {
	taken := map[string]bool{"search_documents": true, "files_read": true}
	cases := []struct{ server, tool, want string }{
		{"everything", "echo", "everything_echo"},
		{"files", "read", "files_read_2"}, // a built-in has the name
		{"files", "read", "files_read_3"}, // and so has the call before
		{"my server", "get.thing/now", "my_server_get_thing_now"},
		{"", "", "tool_tool"},
		{"ünïcode", "tööl", "__n__code_t____l"},
		{strings.Repeat("s", 40), strings.Repeat("t", 40), ""},
		{strings.Repeat("s", 40), strings.Repeat("t", 40), ""},
	}
	for _, c := range cases {
		got := toolName(c.server, c.tool, taken)
		if !validName.MatchString(got) {
			t.Errorf("%q/%q: %q is not a valid name", c.server, c.tool, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("%q/%q: got %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	if len(taken) != 2+len(cases) {
		t.Errorf("names collided: %v", taken)
	}
	if a, b := toolName("x", "y", map[string]bool{}), toolName("x", "y", map[string]bool{}); a != b {
		t.Errorf("unstable: %q, %q", a, b)
	}
}
