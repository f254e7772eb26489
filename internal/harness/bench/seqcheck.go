package bench

// SeqCheck checks one stream's sequence numbers as they arrive: a stream
// followed from the start must deliver seq 1, 2, 3, … each exactly once.
// The zero value expects seq 1 next.
type SeqCheck struct {
	last int64
	// Gaps counts arrivals past the next expected seq.
	Gaps int
	// Missing counts the events those gaps skipped.
	Missing int64
	// Duplicates counts arrivals at or before the last seq seen.
	Duplicates int
}

// Observe records the arrival of the event with sequence number seq.
func (c *SeqCheck) Observe(seq int64) {
	switch {
	case seq <= c.last:
		c.Duplicates++
		return
	case seq > c.last+1:
		c.Gaps++
		c.Missing += seq - c.last - 1
	}
	c.last = seq
}

// Snapshot records a snapshot event standing for every event up to seq: the
// next event expected is seq+1. A snapshot that goes back counts as a
// duplicate.
func (c *SeqCheck) Snapshot(seq int64) {
	if seq < c.last {
		c.Duplicates++
		return
	}
	c.last = seq
}

// Last returns the sequence number of the last event seen (0 before any),
// the cursor to resume from.
func (c *SeqCheck) Last() int64 { return c.last }
