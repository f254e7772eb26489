package app_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/harness/pgtest"
)

// TestPoolerSaidAtStart opens the database through PgBouncer in
// transaction mode, without and with the direct URL: one line says so,
// and without the direct URL it says what to set.
func TestPoolerSaidAtStart(t *testing.T) {
	direct := pgtest.URL(t)
	pooled := pgtest.Pooled(t, direct)
	for _, tt := range []struct {
		name, directURL, want string
	}{
		{"direct", "", ""},
		{"pooled", "", "DATABASE_DIRECT_URL is not set"},
		{"pooled with a direct url", direct, "use DATABASE_DIRECT_URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := pooled
			if tt.name == "direct" {
				u = direct
			}
			var log bytes.Buffer
			d, err := app.OpenDatabase(t.Context(), app.Config{DatabaseURL: u, DatabaseDirectURL: tt.directURL, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			var lines []string
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.Contains(l, "pooler") {
					lines = append(lines, l)
				}
			}
			switch {
			case tt.want == "" && len(lines) > 0:
				t.Errorf("a direct URL logged %q", lines)
			case tt.want != "" && (len(lines) != 1 || !strings.Contains(lines[0], tt.want)):
				t.Errorf("logged %q, want one line with %q", lines, tt.want)
			}
		})
	}
}
