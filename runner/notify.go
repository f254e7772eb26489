package runner

import (
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
