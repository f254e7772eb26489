package demo_test

import (
	"fmt"

	"github.com/toolmark/toolmark/simplifiedagent/demo"
)

func ExampleParts() {
	for _, p := range demo.Parts("How does resume work? And what happens on cancellation?") {
		fmt.Printf("%q -> search %q\n", p, demo.Keywords(p))
	}
	// Output:
	// "How does resume work" -> search "resume"
	// "And what happens on cancellation" -> search "cancellation"
}
