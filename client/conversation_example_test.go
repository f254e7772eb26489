package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolmark/toolmark/client"
	"github.com/toolmark/toolmark/statustext"
)

// A Conversation owns the messages and calls OnChange after every change:
// the user interface only redraws from Messages. (The made-up server
// answers with the turn of exampleServer.)
func ExampleConversation() {
	events := exampleServer()
	defer events.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/conversations", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"conversation":{"id":"conv_1","title":"Resuming"}}`)
	})
	mux.HandleFunc("POST /api/conversations/conv_1/turns", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"turn":{"id":"turn_1","conversationId":"conv_1","userMessageId":"msg_1","assistantMessageId":"msg_2","status":"queued"}}`)
	})
	mux.Handle("GET /api/turns/turn_1/events", events.Config.Handler)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cv := client.NewConversation(client.New(srv.URL), "", func(cv *client.Conversation) {
		msgs := cv.Messages() // a copy: safe to keep, to hand to another goroutine
		answer := msgs[len(msgs)-1]
		var calls []string
		for _, tc := range answer.Calls {
			head, _ := statustext.Lines(statustext.Line(tc.StatusText, tc.Markup))
			calls = append(calls, fmt.Sprintf("%s %s %q", tc.Name, tc.Status, head))
		}
		fmt.Printf("%d messages, answer %s, calls [%s], text %q\n",
			len(msgs), answer.Status, strings.Join(calls, ", "), answer.Text)
	})
	end, err := cv.Send(context.Background(), "How do I resume a stream?")
	fmt.Println(end.Status, err, cv.ID())
	// Output:
	// 2 messages, answer streaming, calls [], text ""
	// 2 messages, answer streaming, calls [], text ""
	// 2 messages, answer streaming, calls [], text ""
	// 2 messages, answer streaming, calls [search_documents pending "Preparing search…"], text ""
	// 2 messages, answer streaming, calls [search_documents pending "Preparing search…"], text ""
	// 2 messages, answer streaming, calls [search_documents pending "Preparing search…"], text ""
	// 2 messages, answer streaming, calls [search_documents running "Searching knowledge base for:"], text ""
	// 2 messages, answer streaming, calls [search_documents success "Found 3 results for:"], text ""
	// 2 messages, answer streaming, calls [search_documents success "Found 3 results for:"], text ""
	// 2 messages, answer streaming, calls [search_documents success "Found 3 results for:"], text "Resume with "
	// 2 messages, answer streaming, calls [search_documents success "Found 3 results for:"], text "Resume with Last-Event-ID; a <ToolCall tag is text here."
	// 2 messages, answer complete, calls [search_documents success "Found 3 results for:"], text "Resume with Last-Event-ID; a <ToolCall tag is text here."
	// completed <nil> conv_1
}
