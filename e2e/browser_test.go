package e2e

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolmark/toolmark/internal/app"
	fp "github.com/toolmark/toolmark/internal/harness/fakeprovider"
	"github.com/toolmark/toolmark/internal/harness/testserver"
)

// The browser tests run in parallel (two at a time on two cores): each has
// its own server, database and Chromium, and most of a test's time is its
// demo answer's pace, which leaves the cores idle. None asserts a timing.

// TestBrowserAsk: a question's tool widgets go running → success live, the
// answer shows, no spinner is left, and a reload shows the same statuses.
func TestBrowserAsk(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 15 * time.Millisecond})
	runScript(t, "ask.mjs", srv.URL)
}

// TestBrowserResume: the page's event stream is cut mid-turn (while the
// browser is offline, so its own reconnects fail too); the page resumes,
// shows no duplicated text, and its live text equals the stored content.
func TestBrowserResume(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 150 * time.Millisecond})
	proxy := httptest.NewServer(newCutProxy(srv.URL))
	defer proxy.Close()
	runScript(t, "drop.mjs", proxy.URL)
}

// TestBrowserStop: the Stop button cancels the turn; widgets show
// cancelled live and after the reload, the turn is cancelled.
func TestBrowserStop(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 100 * time.Millisecond})
	runScript(t, "stop.mjs", srv.URL)
}

// TestBrowserHostileContent: markup and HTML typed by a user show as text;
// no script runs, no dialog opens, no widget is forged.
func TestBrowserHostileContent(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	// A realistic pace, so the page shows the turn live before it ends: with
	// no pause the answer can be done before the live message appears.
	srv := testserver.Start(t, testserver.Options{DemoDelay: 30 * time.Millisecond})
	runScript(t, "hostile.mjs", srv.URL)
}

// TestBrowserReloadMidTurn: a page reloaded while an answer streams picks
// the turn up from the stored message and its seq, and a second tab follows
// it too; both end with the stored text and the same widgets.
func TestBrowserReloadMidTurn(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 40 * time.Millisecond})
	runScript(t, "reload.mjs", srv.URL)
}

// TestBrowserTokenAuth: in token mode the page signs in with a token
// (exchanged for an HttpOnly cookie), streams an answer and signs out.
func TestBrowserTokenAuth(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{Auth: "token"})
	runScript(t, "login.mjs", srv.URL, "TOOLMARK_TEST_TOKEN="+mustToken(t, srv))
}

// mustToken creates a user and an API token on srv.
func mustToken(tb testing.TB, srv *testserver.Server) string {
	tb.Helper()
	ctx := context.Background()
	u, err := srv.DB.EnsureUser(ctx, "e2e")
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := srv.DB.CreateToken(ctx, u.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// TestBrowserSidebar: listing, selecting, deleting (with a confirmation)
// and starting conversations.
func TestBrowserSidebar(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "sidebar.mjs", srv.URL)
}

// TestBrowserLive: the status bubble (Thinking…, each tool's status text,
// cleared by the first token), markdown rendered while it streams, widget
// state kept, live HTML equal to the stored html, copy buttons; it saves
// the README's screenshots of a running and a finished turn.
func TestBrowserLive(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 40 * time.Millisecond})
	runScript(t, "live.mjs", srv.URL)
}

// TestBrowserMobile: at 375 px the answer keeps the screen's width, the
// conversation list is a drawer and the plan folds.
func TestBrowserMobile(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 15 * time.Millisecond})
	runScript(t, "mobile.mjs", srv.URL)
}

// TestBrowserScroll: the view follows the answer while the plan appears
// and after a reload mid-turn; scrolled up, it stays put and offers "Jump
// to latest", which follows again.
func TestBrowserScroll(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 40 * time.Millisecond})
	runScript(t, "scroll.mjs", srv.URL)
}

// TestBrowserKeyboard: the messages come before the conversation list in
// the tab order; the focus moves from Send to Stop and back to the message
// box, stays on a conversation opened with the keyboard; Esc stops a turn;
// the page's controls are named by their visible text.
func TestBrowserKeyboard(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 60 * time.Millisecond})
	runScript(t, "keyboard.mjs", srv.URL)
}

// TestBrowserConversationList: the list is read a page at a time, titles
// keep their words at 1280 px, the open conversation is scrolled into view
// and one with an answer being written is marked.
func TestBrowserConversationList(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 150 * time.Millisecond})
	runScript(t, "list.mjs", srv.URL)
}

// TestBrowserDetails: the message box grows, the tab's title follows the
// conversation, code blocks show their language and keep Copy in view, a
// page loaded while the server is away tries again, and a first message
// that fails (413, 500, offline) leaves no conversation behind.
func TestBrowserDetails(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	runScript(t, "details.mjs", srv.URL)
}

// TestBrowserActions: Retry (a stopped answer, whose plan does not claim
// to be done), Regenerate, Edit (Esc cancels), Rename, Export (Markdown and
// JSON) and Search (snippets, Esc clears), pressed by their accessible
// names at 1200 px and 375 px; each checked through the API and on screen,
// and each new turn followed live as after a send.
// With a model that fails once per question, a failed answer offers
// Retry, which answers it.
func TestBrowserActions(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	t.Run("every action", func(t *testing.T) {
		srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
		runScript(t, "actions.mjs", srv.URL)
	})
	t.Run("failed answer", func(t *testing.T) {
		fail := fp.Reply{Status: 401}
		answer := fp.Reply{Text: []string{"A lease is ", "a time-limited claim on a turn."}}
		model := fp.Start(t, fp.OpenAI, fail, answer, fail, answer)
		srv := testserver.Start(t, testserver.Options{Model: &app.ModelConfig{
			Provider: "openai", BaseURL: model.BaseURL(), APIKey: fp.APIKey, Name: "gpt-4o-mini",
		}})
		runScript(t, "actions.mjs", srv.URL, "TOOLMARK_ACTIONS=failed")
	})
}

// TestBrowserMarkdown: an answer of a real streaming model (a local
// OpenAI-compatible service) with a task list, LaTeX and a mermaid block:
// checkboxes, KaTeX under the page's Content-Security-Policy with the
// source's backslashes kept, mermaid left as code.
func TestBrowserMarkdown(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	answer := []string{
		"The steps:\n\n- [x] read the log\n- [ ] write the answer\n\n",
		"$$\\int_0^1 x\\,dx$$\n\nInline $a^2+b^2=c^2$ too",
		", and $\\frac{1}{2}$.\n\n```mermaid\ngraph TD; A-->B\n```\n",
	}
	model := fp.Start(t, fp.OpenAI, fp.Reply{Text: answer})
	srv := testserver.Start(t, testserver.Options{Model: &app.ModelConfig{
		Provider: "openai", BaseURL: model.BaseURL(), APIKey: fp.APIKey, Name: "gpt-4o-mini",
	}})
	runScript(t, "markdown.mjs", srv.URL)
}

// TestBrowserPaging: a long conversation opens with its latest messages
// and loads the earlier ones a page at a time as the reader scrolls up,
// without moving what is shown.
func TestBrowserPaging(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "paging.mjs", srv.URL)
}

// TestBrowserLayout: only the message list scrolls: wheel turns at the
// bottom and over the header, the composer and the sidebar, and the keys
// that scroll a page, leave the document as tall as the window at 1200 px
// and at 375 px.
func TestBrowserLayout(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	runScript(t, "layout.mjs", srv.URL)
}

// TestBrowserAccessibility: the page has one polite live region, which
// announces what the tools do in a few words (a failed call with its
// reason); within a turn with tools every button has a name of its own.
func TestBrowserAccessibility(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	runScript(t, "a11y.mjs", srv.URL)
}

// TestBrowserTabs: a turn sent in one tab, or started through the API as
// the terminal client does, shows in another tab on the conversation
// within a second; a tab whose send is refused (a turn is running) follows
// the running answer and keeps its text.
func TestBrowserTabs(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 30 * time.Millisecond})
	runScript(t, "tabs.mjs", srv.URL)
}

// TestBrowserSearchHit: a search hit in turn 3 of 34 opens its
// conversation with turn 3 loaded, in view and the match marked.
func TestBrowserSearchHit(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "searchhit.mjs", srv.URL)
}

// TestBrowserVersions: every question offers Edit and every answer
// Regenerate; an earlier question edited shows 2/2, and its first version
// brings the first branch back whole, after a reload too.
func TestBrowserVersions(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{DemoDelay: 5 * time.Millisecond})
	runScript(t, "versions.mjs", srv.URL)
}

// TestBrowserPlace: a reload keeps the reader's place in a conversation.
func TestBrowserPlace(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "place.mjs", srv.URL)
}

// TestBrowserModels: with two models the picker beside the composer lists
// what GET /api/models does, the default picked; each answer names the
// model picked for it, and a reload shows the conversation's model picked.
// Regenerate and Retry answer again with a model picked in their menu.
func TestBrowserModels(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	// A pace at which an answer can be stopped, to be retried.
	srv := testserver.Start(t, testserver.Options{DemoDelay: 30 * time.Millisecond, Models: []app.ModelConfig{
		{ID: "quick", Label: "Quick demo", Provider: "demo"},
		{ID: "deep", Label: "Deep demo", Provider: "demo", Default: true},
	}})
	runScript(t, "models.mjs", srv.URL)
}

// TestBrowserAttachments: files attached on the page show as chips before
// and after sending and after a reload, reach the demo model, and an SVG or
// HTML file never renders.
func TestBrowserAttachments(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	runScript(t, "attach.mjs", srv.URL)
}
