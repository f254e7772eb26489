package store

import (
	"context"
	"fmt"
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
// connection is re-established with exponential backoff (100 ms to 5 s);
// notifications sent while it was down are lost, so a consumer that must not
// miss an event also polls (EventsAfter) now and then.
func (db *DB) Listen(ctx context.Context, channels ...string) (<-chan Notification, error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	conn, err := listenConn(ctx, cfg, channels)
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	out := make(chan Notification, 256)
	go func() {
		defer close(out)
		backoff := 100 * time.Millisecond
		for {
			if conn != nil {
				n, err := conn.WaitForNotification(ctx)
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
			backoff = min(backoff*2, 5*time.Second)
			if conn, err = listenConn(ctx, cfg, channels); err != nil {
				db.log.Warn("listen: reconnecting failed", "err", err)
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
