package bench

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/toolmark/toolmark/internal/harness/pgbouncer"
)

// Replicas: the bench can start several servers on one PostgreSQL
// (Config.Replicas), optionally reaching it through PgBouncer in
// transaction mode (Config.Pooler), or measure several running ones
// (Config.Server, comma-separated). Turn k is posted to replica k mod N
// and its followers stream from the other replicas, so every event they
// get crossed from one replica to another through PostgreSQL; the server
// figures are the sum over the replicas.

// Poolers the bench can put between its servers and PostgreSQL.
const (
	// PoolerNone connects the servers directly.
	PoolerNone = ""
	// PoolerOnly gives the servers PgBouncer's URL alone.
	PoolerOnly = "pgbouncer"
	// PoolerWithDirect gives them PgBouncer's URL and the direct one as
	// DATABASE_DIRECT_URL.
	PoolerWithDirect = "pgbouncer+direct"
)

// checkReplicas validates Config.Replicas and Config.Pooler.
func (c *Config) checkReplicas() error {
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	switch c.Pooler {
	case PoolerNone, PoolerOnly, PoolerWithDirect:
	default:
		return fmt.Errorf("unknown pooler %q (have %q, %q or none)", c.Pooler, PoolerOnly, PoolerWithDirect)
	}
	if c.Server != "" && (c.Replicas > 1 || c.Pooler != PoolerNone) {
		return fmt.Errorf("replicas and a pooler are for the servers the bench starts; give running replicas as --server URL,URL,…")
	}
	return nil
}

// startPooler starts PgBouncer in front of the bench's PostgreSQL when
// Config.Pooler asks for it.
func (b *Bench) startPooler(ctx context.Context) error {
	if b.cfg.Pooler == PoolerNone {
		return nil
	}
	pb, err := pgbouncer.Start(ctx, pgbouncer.Config{Server: b.dbURL, PoolSize: 40})
	if err != nil {
		return err
	}
	b.bouncer = pb
	b.out.say("PgBouncer 1.18 in transaction mode on port %d in front of PostgreSQL (%s)", pb.Port(), b.cfg.Pooler)
	return nil
}

// serverDB returns the database URL and the environment of the servers
// the bench starts: directly, or through PgBouncer with or without the
// direct URL as DATABASE_DIRECT_URL.
func (b *Bench) serverDB() (string, []string, error) {
	if b.bouncer == nil {
		return b.dbURL, nil, nil
	}
	u, err := b.bouncer.Pooled(b.dbURL)
	if err != nil {
		return "", nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_DIRECT_URL=") {
			env = append(env, kv)
		}
	}
	if b.cfg.Pooler == PoolerWithDirect {
		env = append(env, "DATABASE_DIRECT_URL="+b.dbURL)
	}
	return u, env, nil
}

// usage is the sum of the resources of the target's servers.
func (t *target) usage() (proc, error) {
	var sum proc
	for _, s := range append([]*Server{t.server}, t.peers...) {
		p, err := s.usage()
		if err != nil {
			return sum, err
		}
		sum.CPU += p.CPU
		sum.SysCPU += p.SysCPU
		sum.RSS += p.RSS
		sum.PeakRSS += p.PeakRSS
	}
	return sum, nil
}

// replica returns the session of the replica turn k is posted to.
func (s *session) replica(k int) *session {
	if len(s.ring) == 0 {
		return s
	}
	return s.ring[k%len(s.ring)]
}

// follower returns the session the f-th follower of a turn posted through
// s streams from: another replica than s's, when there are several.
func (s *session) follower(f int) *session {
	n := len(s.ring)
	if n < 2 {
		return s
	}
	return s.ring[(s.idx+1+f%(n-1))%n]
}
