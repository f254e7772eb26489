package demo

import (
	"io/fs"
	"path"
	"sync"

	"github.com/toolmark/toolmark"
)

// corpusDocument returns the text of the bundled document at where.
func corpusDocument(where string) string {
	if where == "" {
		return ""
	}
	b, err := fs.ReadFile(toolmark.DemoCorpus(), "testdata/corpus/"+path.Base(where))
	if err != nil {
		return ""
	}
	return string(b)
}

// corpusSentences returns the sentences of the demo corpus's document
// where names (nil if none), split once: the corpus is built in, and every
// answer quotes from it. Callers must not change the slice.
func corpusSentences(where string) []string {
	name := path.Base(where)
	if s, ok := sentenceCache.Load(name); ok {
		return s.([]string)
	}
	doc := corpusDocument(where)
	if doc == "" {
		return nil
	}
	s := sentencesOf(doc)
	sentenceCache.Store(name, s)
	return s
}

// sentenceCache holds corpusSentences' results by the name of a corpus
// document (a few dozen).
var sentenceCache sync.Map
