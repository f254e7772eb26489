package tui_test

import (
	"fmt"

	"github.com/toolmark/toolmark/tui"
)

func ExampleSanitize() {
	fmt.Printf("%q\n", tui.Sanitize("ok \x1b[41mred\x1b[0m \x1b]0;title\x07\u009b2Jdone\r\n"))
	fmt.Printf("%q\n", tui.SanitizeLine("two\nlines\tand a tab"))
	// Output:
	// "ok red done\n"
	// "two lines and a tab"
}
