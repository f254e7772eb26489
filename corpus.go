package toolmark

import (
	"embed"
	"io/fs"
)

//go:embed testdata/corpus/*.md
var demoCorpus embed.FS

// DemoCorpus returns the bundled knowledge base: short documents about
// toolmark itself, which the offline demo model searches. Paths are
// "testdata/corpus/NAME.md".
func DemoCorpus() fs.FS { return demoCorpus }
