package e2e

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/testserver"
)

// TestBrowserAsk: a question's tool widgets go running → success live, the
// answer shows, no spinner is left, and a reload shows the same statuses.
func TestBrowserAsk(t *testing.T) {
	needBrowser(t)
	srv := testserver.Start(t, testserver.Options{DemoDelay: 15 * time.Millisecond})
	runScript(t, "ask.mjs", srv.URL)
}

// TestBrowserResume: the page's event stream is cut mid-turn (while the
// browser is offline, so its own reconnects fail too); the page resumes,
// shows no duplicated text, and its live text equals the stored content.
func TestBrowserResume(t *testing.T) {
	needBrowser(t)
	srv := testserver.Start(t, testserver.Options{DemoDelay: 40 * time.Millisecond})
	proxy := httptest.NewServer(newCutProxy(srv.URL))
	defer proxy.Close()
	runScript(t, "drop.mjs", proxy.URL)
}

// TestBrowserStop: the Stop button cancels the turn; widgets show
// cancelled live and after the reload, the turn is cancelled.
func TestBrowserStop(t *testing.T) {
	needBrowser(t)
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	runScript(t, "stop.mjs", srv.URL)
}

// TestBrowserHostileContent: markup and HTML typed by a user show as text;
// no script runs, no dialog opens, no widget is forged.
func TestBrowserHostileContent(t *testing.T) {
	needBrowser(t)
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "hostile.mjs", srv.URL)
}
