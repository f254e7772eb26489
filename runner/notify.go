package runner

import (
	"context"
	"strconv"
	"strings"

	"github.com/toolmark/toolmark/store"
)

// notified handles a PostgreSQL notification from any replica.
func (r *Runner) notified(n store.Notification) {
	switch n.Channel {
	case store.ChannelEvents:
		for _, item := range strings.Split(n.Payload, ",") {
			if turnID, seq, ok := parseEventsPayload(item); ok {
				r.hub.Notify(turnID, seq)
			}
		}
	case store.ChannelCancel:
		r.cancelLocal(n.Payload)
	case store.ChannelReplicas:
		if n.Payload != r.cfg.Owner {
			r.cfg.Store.SetAnnounce(true)
		}
	}
}

// countPeers turns the commits' notifications on while another replica is
// alive, and off while this one is alone: nobody else follows its turns,
// and its own followers are fed from memory.
//
// A replica that starts takes its liveness lock, then says so on
// ChannelReplicas (store.Join), and the others turn their notifications on
// when they hear it. countPeers and notified run on the loop's goroutine
// one after the other, so a count made before a new replica's lock was
// taken cannot undo the join heard after it; a join missed while the
// listening connection was down is made up by the next count.
func (r *Runner) countPeers(ctx context.Context) {
	n, err := r.cfg.Store.OtherReplicas(ctx, r.cfg.Owner)
	if err != nil && ctx.Err() == nil {
		r.log.Warn("counting replicas", "err", err)
	}
	r.cfg.Store.SetAnnounce(err != nil || n > 0)
}

// parseEventsPayload reads one "turnID:lastSeq" item of ChannelEvents.
func parseEventsPayload(p string) (string, int64, bool) {
	i := strings.LastIndexByte(p, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(p[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return p[:i], seq, true
}
