package client_test

import (
	"fmt"
	"io"
	"strings"

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
