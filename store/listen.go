package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notification is one PostgreSQL notification received by Listen.
type Notification struct {
	Channel string
	Payload string
}

// Listen subscribes to the notification channels (such as ChannelEvents and
// ChannelCancel) on one dedicated connection and delivers what arrives on
// the returned channel until ctx is done, when the channel is closed. A lost
// connection is re-established with exponential backoff (100 ms to 1 s);
// notifications sent while it was down are lost, so a consumer that must not
// miss an event also polls (EventsAfter) now and then.
func (db *DB) Listen(ctx context.Context, channels ...string) (<-chan Notification, error) {
	return db.ListenAs(ctx, "", channels...)
}

// LivenessHeldFor returns how long this process has held the liveness lock
// it took with ListenAs, without interruption; 0 while it does not hold it
// (its connection is down, or a previous session still has it).
func (db *DB) LivenessHeldFor() time.Duration {
	since := db.livenessSince.Load()
	if since == 0 {
		return 0
	}
	return time.Since(time.Unix(0, since))
}

// ListenAs is Listen on a connection that also holds the liveness lock of
// owner (a session-level advisory lock): while the process lives and its
// session does, other replicas see the owner alive; when it dies, its
// session ends, the lock goes with it, and they take over its turns at
// once (SweepExpired, Adopt) instead of waiting for the leases to
// expire. A lock still held by a previous session of the same owner is
// taken as soon as that session is gone.
//
// Both need a session (see Sessions): on a store without one they fail.
func (db *DB) ListenAs(ctx context.Context, owner string, channels ...string) (<-chan Notification, error) {
	if db.session == nil {
		return nil, fmt.Errorf("listening: %w", errNoSession)
	}
	cfg := db.session.Copy()
	conn, err := listenConn(ctx, cfg, channels)
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	locked := owner == ""
	lock := func() {
		if locked || conn == nil {
			return
		}
		if err := conn.QueryRow(ctx, `select pg_try_advisory_lock($1, hashtext($2))`, livenessClass, owner).Scan(&locked); err != nil {
			db.log.Warn("listen: taking the liveness lock", "err", err)
		}
		if locked {
			db.livenessSince.Store(time.Now().UnixNano())
		}
	}
	lock()
	out := make(chan Notification, 256)
	go func() {
		defer close(out)
		backoff := 100 * time.Millisecond
		for {
			if conn != nil {
				wctx, cancel := ctx, context.CancelFunc(func() {})
				if !locked {
					wctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				}
				n, err := conn.WaitForNotification(wctx)
				cancel()
				if err != nil && !locked && ctx.Err() == nil && wctx.Err() != nil {
					lock() // the wait timed out: try the lock again
					continue
				}
				if err == nil {
					backoff = 100 * time.Millisecond
					select {
					case out <- Notification{Channel: n.Channel, Payload: n.Payload}:
					case <-ctx.Done():
						conn.Close(context.Background())
						return
					}
					continue
				}
				conn.Close(context.Background())
				conn = nil
				db.livenessSince.Store(0)
				if ctx.Err() != nil {
					return
				}
				db.log.Warn("listen: connection lost; reconnecting", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Second)
			if conn, err = listenConn(ctx, cfg, channels); err != nil {
				db.log.Warn("listen: reconnecting failed", "err", err)
			} else {
				locked = owner == ""
				lock()
			}
		}
	}()
	return out, nil
}

func listenConn(ctx context.Context, cfg *pgx.ConnConfig, channels []string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "listen "+pgx.Identifier{ch}.Sanitize()); err != nil {
			conn.Close(context.Background())
			return nil, err
		}
	}
	return conn, nil
}

// Join tells the other replicas on the database that owner has started,
// on ChannelReplicas. Call it once its liveness lock is held (ListenAs), so
// that a replica that hears it and one that counts the locks
// (OtherReplicas) agree.
func (db *DB) Join(ctx context.Context, owner string) error {
	if _, err := db.pool.Exec(ctx, `select pg_notify('`+ChannelReplicas+`', $1)`, owner); err != nil {
		return fmt.Errorf("announcing this replica: %w", err)
	}
	return nil
}

// AnnounceTurn tells the other replicas that owner started turn turnID in
// conversation conversationID, on ChannelTurns. Like Commit's
// notifications it is sent only while SetAnnounce has them on: a replica
// alone on its database tells its own watchers from memory.
func (db *DB) AnnounceTurn(ctx context.Context, owner, conversationID, turnID string) error {
	if db.quiet.Load() {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `select pg_notify('`+ChannelTurns+`', $1)`, TurnPayload(turnID, conversationID, owner)); err != nil {
		return fmt.Errorf("announcing a turn: %w", err)
	}
	return nil
}

// TurnPayload is the payload of a ChannelTurns notification; ParseTurnPayload
// reads it back.
func TurnPayload(turnID, conversationID, owner string) string {
	return turnID + " " + conversationID + " " + owner
}

// ParseTurnPayload reads a ChannelTurns payload made by TurnPayload. The
// owner, last, may hold spaces; the ids hold none.
func ParseTurnPayload(p string) (turnID, conversationID, owner string, ok bool) {
	f := strings.SplitN(p, " ", 3)
	if len(f) != 3 || f[0] == "" || f[1] == "" {
		return "", "", "", false
	}
	return f[0], f[1], f[2], true
}

// SetAnnounce says whether Commit notifies ChannelEvents (on at first). A
// replica alone on its database turns it off: its own followers are fed
// from memory, and every notification would wake its listening
// connection for nothing, a transaction each in PostgreSQL. It turns it on
// again before another replica can follow its turns (see runner's peers).
func (db *DB) SetAnnounce(on bool) { db.quiet.Store(!on) }
