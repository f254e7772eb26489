package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/client"
)

func ExampleReader() {
	stream := "retry: 1000\r\n\r\n" +
		": keep-alive\r\n\r\n" +
		"id: 1\r\nevent: text_delta\r\ndata: {\"seq\":1}\r\n\r\n" +
		"id: 2\r\nevent: text_delta\r\ndata: {\"seq\":" // cut by the network
	r := client.NewReader(strings.NewReader(stream))
	for {
		f, err := r.Next()
		if err != nil {
			fmt.Println("end:", err == io.ErrUnexpectedEOF)
			return
		}
		fmt.Printf("id=%q event=%q data=%q retry=%d\n", f.ID, f.Event, f.Data, f.Retry)
	}
	// Output:
	// id="" event="" data="" retry=1000
	// id="1" event="text_delta" data="{\"seq\":1}" retry=0
	// end: true
}

// A made-up server that drops the first connection after two events; Follow
// resumes with Last-Event-ID and delivers each event once.
func ExampleClient_Follow() {
	frames := []string{
		`{"seq":1,"type":"turn_started","data":{"model":"demo"}}`,
		`{"seq":2,"type":"text_delta","data":{"text":"Hello, "}}`,
		`{"seq":3,"type":"text_delta","data":{"text":"world."}}`,
		`{"seq":4,"type":"turn_completed","data":{"status":"completed"}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 10\n\n")
		for i, data := range frames[after:] {
			if after == 0 && i == 2 {
				return // the connection drops before the turn's end
			}
			client.WriteFrame(w, client.Frame{ID: strconv.Itoa(after + i + 1), Data: data})
		}
	}))
	defer srv.Close()

	c := client.New(srv.URL)
	err := c.Follow(context.Background(), "turn_1", 0, func(ev toolmark.Event) error {
		fmt.Println(ev.Seq, ev.Type)
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// 1 turn_started
	// 2 text_delta
	// 3 text_delta
	// 4 turn_completed
	// err: <nil>
}
