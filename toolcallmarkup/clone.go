package toolcallmarkup

import (
	"bytes"
	"slices"
)

// Clone returns a copy of d that shares nothing with it: either may change
// after without the other seeing it. It costs a copy of the content, and
// parses nothing.
func (d *Document) Clone() *Document {
	c := &Document{byID: make(map[string]*node, len(d.byID)), nz: d.nz, size: d.size}
	c.root = *d.root.clone(c.byID)
	return c
}

// clone copies n and the elements of its body, indexing them in byID.
func (n *node) clone(byID map[string]*node) *node {
	c := &node{tc: n.tc, open: n.open, closed: n.closed, implicitParent: n.implicitParent, items: make([]item, len(n.items))}
	c.tc.Attrs = slices.Clone(n.tc.Attrs)
	for i, it := range n.items {
		if it.n == nil {
			c.items[i].text = bytes.Clone(it.text)
			continue
		}
		c.items[i].n = it.n.clone(byID)
		byID[it.n.tc.ID] = c.items[i].n
	}
	return c
}
