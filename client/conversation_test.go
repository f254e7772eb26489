package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/internal/pgtest"
	"github.com/toolmark/toolmark/internal/testserver"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// changes records what OnChange saw: a snapshot of the messages per call.
type changes struct {
	mu    sync.Mutex
	snaps [][]client.ConversationMessage
}

func (c *changes) record(cv *client.Conversation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snaps = append(c.snaps, cv.Messages())
}

func (c *changes) all() [][]client.ConversationMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snaps
}

// TestClientConversationSend: against a real server, Send creates the
// conversation, adds the question and the answer, and calls OnChange once
// when they are added and once per event of the turn; the answer grows in
// place; the snapshots taken earlier never change; the end state is what
// the server stored, as a fresh Load shows it.
func TestClientConversationSend(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: time.Millisecond})
	c := client.New(srv.URL)
	ctx := context.Background()
	var rec changes
	cv := client.NewConversation(c, "", rec.record)

	// Another goroutine reads the messages all along (go test -race).
	stop := make(chan struct{})
	var reads sync.WaitGroup
	reads.Add(1)
	go func() {
		defer reads.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, m := range cv.Messages() {
				_ = len(m.Text) + len(m.Calls) + len(m.ToolCalls) + len(m.Todos)
			}
		}
	}()
	end, err := cv.Send(ctx, "Compare resuming with cancelling, and explain snapshots.")
	close(stop)
	reads.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != toolmark.TurnCompleted {
		t.Fatalf("the turn ended %s (%s)", end.Status, end.Error)
	}
	if cv.ID() == "" || cv.Info().Title == "" {
		t.Errorf("id %q, title %q: the conversation and its title come from the server", cv.ID(), cv.Info().Title)
	}
	if _, ok := cv.Running(); ok {
		t.Error("a turn still runs after Send returned")
	}

	msgs := cv.Messages()
	if len(msgs) != 2 || msgs[0].Role != toolmark.RoleUser || msgs[1].Role != toolmark.RoleAssistant {
		t.Fatalf("messages %+v", msgs)
	}
	answer := msgs[1]
	var evs int
	for _, err := range c.Events(ctx, answer.TurnID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		evs++
	}
	snaps := rec.all()
	if len(snaps) < 1+evs {
		t.Fatalf("OnChange was called %d times for %d events", len(snaps), evs)
	}
	// Every snapshot has the question and the answer so far; each answer's
	// text starts with the one before; the first is empty.
	prev := ""
	for i, s := range snaps[:1+evs] {
		if len(s) != 2 || s[0].Text != msgs[0].Text {
			t.Fatalf("snapshot %d: %+v", i, s)
		}
		if !strings.HasPrefix(s[1].Text, prev) {
			t.Fatalf("snapshot %d: the answer %q does not go on from %q", i, s[1].Text, prev)
		}
		prev = s[1].Text
		if i < evs && s[1].Status != toolmark.MessageStreaming {
			t.Errorf("snapshot %d: status %s before the end", i, s[1].Status)
		}
	}
	if snaps[0][1].Text != "" || len(snaps[0][1].Calls) != 0 {
		t.Errorf("the first snapshot has an answer already: %+v", snaps[0][1])
	}
	var sawRunning bool
	for _, s := range snaps {
		for _, tc := range s[1].Calls {
			if tc.Stage == client.StageRunning && tc.Name != "" && tc.StatusText != "" {
				sawRunning = true
			}
		}
	}
	if !sawRunning {
		t.Error("no snapshot shows a tool call running, with its name and status text")
	}

	// The end state is what the server stored.
	fresh := client.NewConversation(c, cv.ID(), nil)
	if err := fresh.Load(ctx); err != nil {
		t.Fatal(err)
	}
	stored := fresh.Messages()
	if len(stored) != 2 {
		t.Fatalf("stored messages %+v", stored)
	}
	for i := range stored {
		got, want := msgs[i], stored[i]
		if got.ID != want.ID || got.Content != want.Content || got.Status != want.Status || got.Text != want.Text {
			t.Errorf("message %d: followed %s %s %q, stored %s %s %q", i, got.ID, got.Status, got.Content, want.ID, want.Status, want.Content)
		}
	}
	if len(answer.Calls) == 0 || len(answer.Calls) != len(stored[1].Calls) {
		t.Fatalf("calls: followed %d, stored %d", len(answer.Calls), len(stored[1].Calls))
	}
	for i, tc := range answer.Calls {
		if tc.ID != stored[1].Calls[i].ID || tc.Status != stored[1].Calls[i].Status || tc.Stage != client.StageEnd {
			t.Errorf("call %d: followed %+v, stored %+v", i, tc, stored[1].Calls[i])
		}
	}
	if answer.Text != toolcallmarkup.Text(answer.Content) {
		t.Errorf("Text %q is not the content's text", answer.Text)
	}

	// A second message goes on in the same conversation.
	if _, err := cv.Send(ctx, "And what is a lease?"); err != nil {
		t.Fatal(err)
	}
	if got := cv.Messages(); len(got) != 4 || got[3].Status != toolmark.MessageComplete || got[3].Text == "" {
		t.Errorf("after a second Send: %d messages", len(got))
	}
	if len(msgs) != 2 || msgs[1].Text != answer.Text {
		t.Error("a snapshot taken earlier changed")
	}
}

// TestClientConversationResumeAndCancel: Load finds a turn that runs and Resume
// follows it from where its answer stood to its end; Cancel during a Send
// ends the answer cancelled; a second call while one runs gets ErrBusy.
func TestClientConversationResumeAndCancel(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{DemoDelay: 20 * time.Millisecond})
	c := client.New(srv.URL)
	ctx := context.Background()
	conv, err := c.CreateConversation(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	ti, err := c.PostTurn(ctx, conv.ID, "How does resume work?", "")
	if err != nil {
		t.Fatal(err)
	}
	// Wait until some of the answer is written.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := c.GetTurn(ctx, ti.Turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Seq > 3 && !st.Turn.Status.Final() {
			break
		}
		if st.Turn.Status.Final() || time.Now().After(deadline) {
			t.Fatalf("the turn is %s at seq %d: too fast or too slow to resume", st.Turn.Status, st.Seq)
		}
	}
	var calls atomic.Int32
	cv := client.NewConversation(c, conv.ID, func(*client.Conversation) { calls.Add(1) })
	if err := cv.Load(ctx); err != nil {
		t.Fatal(err)
	}
	running, ok := cv.Running()
	if !ok || running.ID != ti.Turn.ID {
		t.Fatalf("Load found no turn running (%v, %+v)", ok, running)
	}
	loaded := cv.Messages()
	if len(loaded) != 2 || loaded[1].Status != toolmark.MessageStreaming {
		t.Fatalf("loaded %+v", loaded)
	}
	end, err := cv.Resume(ctx)
	if err != nil || end.Status != toolmark.TurnCompleted {
		t.Fatalf("Resume: %v, %+v", err, end)
	}
	final := cv.Messages()[1]
	st, err := c.GetTurn(ctx, ti.Turn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.Content != st.Content || final.Status != toolmark.MessageComplete || final.Seq != st.Seq {
		t.Errorf("resumed answer (seq %d, %s):\n%q\nstored (seq %d):\n%q", final.Seq, final.Status, final.Content, st.Seq, st.Content)
	}
	if n := calls.Load(); int64(n) < 1+st.Seq-loaded[1].Seq {
		t.Errorf("OnChange was called %d times for %d events after the load", n, st.Seq-loaded[1].Seq)
	}

	// Cancel while Send follows; a Send meanwhile is refused.
	started := make(chan struct{})
	var once sync.Once
	cv2 := client.NewConversation(c, "", func(cv *client.Conversation) {
		msgs := cv.Messages()
		if len(msgs[len(msgs)-1].Calls) > 0 {
			once.Do(func() { close(started) })
		}
	})
	type result struct {
		end toolmark.TurnEndData
		err error
	}
	done := make(chan result, 1)
	go func() {
		end, err := cv2.Send(ctx, "Research how crash recovery works")
		done <- result{end, err}
	}()
	select {
	case <-started:
	case r := <-done:
		t.Fatalf("the turn ended before a tool call: %+v", r)
	case <-time.After(30 * time.Second):
		t.Fatal("no tool call started")
	}
	if _, err := cv2.Send(ctx, "another"); !errors.Is(err, client.ErrBusy) {
		t.Errorf("a Send while one runs: %v, want ErrBusy", err)
	}
	if err := cv2.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.end.Status != toolmark.TurnCancelled {
		t.Fatalf("after Cancel, Send returned %v, %+v", r.err, r.end)
	}
	msgs := cv2.Messages()
	if got := msgs[len(msgs)-1]; got.Status != toolmark.MessageCancelled {
		t.Errorf("the answer is %s after a cancel", got.Status)
	}
}

// TestClientStreamContentAndStart: against a real server whose answer has
// a text delta of only blank lines between its tool calls, Content never
// gets a piece of only whitespace and its pieces add up to the answer;
// Start gets every call with its name and a title.
func TestClientStreamContentAndStart(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := client.New(srv.URL)
	ctx := context.Background()
	conv, err := c.CreateConversation(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	ti, err := c.PostTurn(ctx, conv.ID, "Compare resuming with cancelling, and explain snapshots.", "")
	if err != nil {
		t.Fatal(err)
	}
	var joined string
	var starts []client.ToolStart
	acc, err := c.Stream(ctx, ti.Turn.ID, &client.Handlers{
		Content: func(chunk, accumulated string) {
			if strings.TrimSpace(chunk) == "" {
				t.Errorf("Content got a piece of only whitespace: %q", chunk)
			}
			joined += chunk
			if joined != accumulated {
				t.Errorf("the pieces add up to %q, accumulated is %q", joined, accumulated)
			}
		},
		Start: func(s client.ToolStart) { starts = append(starts, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	blank := 0
	for ev, err := range c.Events(ctx, ti.Turn.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ev.Data.(toolmark.TextDeltaData); ok && strings.TrimSpace(d.Text) == "" {
			blank++
		}
	}
	if blank == 0 {
		t.Fatal("the server's answer has no text delta of only whitespace: the test checks nothing")
	}
	if joined != strings.TrimRight(acc.Text(), " \t\r\n") {
		t.Errorf("the pieces\n%q\nare not the answer\n%q", joined, acc.Text())
	}
	calls := acc.ToolCalls()
	if len(starts) != len(calls) || len(calls) == 0 {
		t.Fatalf("%d starts for %d calls", len(starts), len(calls))
	}
	for i, s := range starts {
		if s.ID != calls[i].ID || s.Name != calls[i].Name || s.Name == "" || s.Title == "" || s.ParentID != calls[i].ParentID {
			t.Errorf("start %d: %+v for call %s %s", i, s, calls[i].ID, calls[i].Name)
		}
	}
}

// TestClientConversationLoadOlder: Load gets the latest page, LoadOlder
// puts the page before it in front, until More is false; OnChange follows
// each.
func TestClientConversationLoadOlder(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	c := client.New(srv.URL)
	ctx := context.Background()
	const turns = 27 // the server's page is 50 messages
	convID := ""
	for i := range turns {
		res, err := c.Chat(ctx, convID, "Question "+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		convID = res.ConversationID
	}
	var changes atomic.Int32
	cv := client.NewConversation(c, convID, func(*client.Conversation) { changes.Add(1) })
	if err := cv.Load(ctx); err != nil {
		t.Fatal(err)
	}
	first := cv.Messages()
	if !cv.More() || len(first) >= 2*turns {
		t.Fatalf("Load got %d messages, more %v: the test needs more than a page", len(first), cv.More())
	}
	for cv.More() {
		if err := cv.LoadOlder(ctx); err != nil {
			t.Fatal(err)
		}
	}
	all := cv.Messages()
	if len(all) != 2*turns {
		t.Fatalf("%d messages after LoadOlder, want %d", len(all), 2*turns)
	}
	for i := range turns {
		if q := all[2*i]; q.Role != toolmark.RoleUser || q.Text != "Question "+strconv.Itoa(i) {
			t.Errorf("message %d: %s %q", 2*i, q.Role, q.Text)
		}
		if a := all[2*i+1]; a.Role != toolmark.RoleAssistant || a.Status != toolmark.MessageComplete || a.Text == "" {
			t.Errorf("message %d: %s %s %q", 2*i+1, a.Role, a.Status, a.Text)
		}
	}
	if all[len(all)-1].ID != first[len(first)-1].ID {
		t.Error("the latest message moved")
	}
	if n := changes.Load(); n < 2 {
		t.Errorf("OnChange was called %d times for a Load and a LoadOlder", n)
	}
	if err := cv.LoadOlder(ctx); err != nil || len(cv.Messages()) != 2*turns {
		t.Errorf("LoadOlder with nothing older: %v, %d messages", err, len(cv.Messages()))
	}
}

// TestClientConversationFailed: an answer whose model refuses ends failed
// with the server's sentence in Error, as a fresh Load shows it too.
func TestClientConversationFailed(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"the model refuses","type":"invalid_request_error"}}`)
	}))
	defer model.Close()
	srv := testserver.Start(t, testserver.Options{Model: &app.ModelConfig{Provider: "openai", BaseURL: model.URL + "/v1", APIKey: "k", Name: "m"}})
	c := client.New(srv.URL)
	ctx := context.Background()
	cv := client.NewConversation(c, "", nil)
	end, err := cv.Send(ctx, "What is a lease?")
	if err != nil {
		t.Fatal(err)
	}
	if end.Status != toolmark.TurnFailed || end.Error == "" {
		t.Fatalf("the turn ended %+v, want failed with a sentence", end)
	}
	msgs := cv.Messages()
	if got := msgs[len(msgs)-1]; got.Status != toolmark.MessageFailed || got.Error != end.Error {
		t.Errorf("the answer is %s with error %q, want failed with %q", got.Status, got.Error, end.Error)
	}
	fresh := client.NewConversation(c, cv.ID(), nil)
	if err := fresh.Load(ctx); err != nil {
		t.Fatal(err)
	}
	stored := fresh.Messages()
	if got := stored[len(stored)-1]; got.Status != toolmark.MessageFailed || got.Error != end.Error {
		t.Errorf("loaded, the answer is %s with error %q, want failed with %q", got.Status, got.Error, end.Error)
	}
}
