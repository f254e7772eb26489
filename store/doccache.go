package store

import "sync"

// maxCachedBodies bounds the bytes of document bodies that docCache keeps
// (their words take about twice as much again).
const maxCachedBodies = 8 << 20

// docCache keeps the bodies of the knowledge-base documents that searches
// found, split into words, by document id and version, so that a search
// of documents it found before reads none of their bodies again: the
// database sends each body once, not with every hit (up to headlineMaxBody
// a hit), and splitWords runs once per body. A version is the row's xmin
// with its updated_at, which every UpsertDocument changes. When the bodies
// pass maxCachedBodies, it forgets documents at random until they fit.
type docCache struct {
	mu    sync.Mutex
	docs  map[string]*cachedDoc
	bytes int
	puts  int // bodies read from the database, for tests
}

type cachedDoc struct {
	version string
	body    string
	words   []span
}

// get returns the document id at version, or nil.
func (c *docCache) get(id, version string) *cachedDoc {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.docs[id]; d != nil && d.version == version {
		return d
	}
	return nil
}

// put keeps body as the document id at version and returns it.
func (c *docCache) put(id, version, body string) *cachedDoc {
	d := &cachedDoc{version: version, body: body, words: splitWords(body)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.puts++
	if c.docs == nil {
		c.docs = map[string]*cachedDoc{}
	}
	if old := c.docs[id]; old != nil {
		c.bytes -= len(old.body)
		delete(c.docs, id)
	}
	for k, old := range c.docs {
		if c.bytes+len(body) <= maxCachedBodies {
			break
		}
		c.bytes -= len(old.body)
		delete(c.docs, k)
	}
	if len(body) <= maxCachedBodies {
		c.docs[id] = d
		c.bytes += len(body)
	}
	return d
}
