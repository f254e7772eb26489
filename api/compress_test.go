package api

import (
	"strings"
	"testing"
)

func TestAcceptedCodings(t *testing.T) {
	for in, want := range map[string]string{
		"gzip":                         "gzip",
		"gzip;q=0":                     "",
		"gzip; q=0.000, deflate":       "deflate",
		"GZIP;Q=0, br;q=1":             "br",
		"gzip;q=0.5, deflate;q=0":      "gzip",
		"gzip;level=1;q=0":             "",
		"gzip;q=x":                     "gzip",
		" , gzip ;q=1 ,, identity;q=0": "gzip",
	} {
		if got := acceptedCodings(in); got != want {
			t.Errorf("acceptedCodings(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzAcceptedCodings: whatever a client sends, what is left is a list of
// the names it sent, without parameters, and reading it again changes
// nothing.
func FuzzAcceptedCodings(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "gzip;q=0, deflate;q=0.5", ";;,;", "gzip;q=1e-400", "\xff;q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := acceptedCodings(v)
		if strings.Contains(got, ";") {
			t.Fatalf("acceptedCodings(%q) = %q keeps parameters", v, got)
		}
		for _, name := range strings.Split(got, ", ") {
			if got != "" && (name == "" || !strings.Contains(v, name)) {
				t.Fatalf("acceptedCodings(%q) = %q: %q was not sent", v, got, name)
			}
		}
		if again := acceptedCodings(got); again != got {
			t.Fatalf("acceptedCodings(%q) = %q, then %q", v, got, again)
		}
	})
}
