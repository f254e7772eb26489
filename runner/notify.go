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
	case store.ChannelTurns:
		turnID, convID, owner, ok := store.ParseTurnPayload(n.Payload)
		if w := r.onTurn.Load(); ok && owner != r.cfg.Owner && w != nil {
			w.started(convID, turnID)
		}
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

// turnWatch is what OnTurnStarted was given.
type turnWatch struct {
	started func(conversationID, turnID string)
	watched func() []string
}

// OnTurnStarted sets started to be called with the conversation and turn
// ids of each turn another replica starts, on the runner's loop: it must
// not block. The turns this replica starts are its caller's to tell. With
// a session they are heard on store.ChannelTurns; without one the active
// turns of the conversations watched returns are polled at each look, and
// started is called for each not seen at the previous one.
func (r *Runner) OnTurnStarted(started func(conversationID, turnID string), watched func() []string) {
	r.onTurn.Store(&turnWatch{started: started, watched: watched})
}

// pollWatched stands in for ChannelTurns on a replica without a session:
// it reports the turns run elsewhere that became active in the watched
// conversations since the last poll.
func (r *Runner) pollWatched(ctx context.Context) {
	w := r.onTurn.Load()
	if w == nil {
		return
	}
	ids := w.watched()
	if len(ids) == 0 {
		r.seenTurns = nil
		return
	}
	active, err := r.cfg.Store.ActiveTurns(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("polling the watched conversations", "err", err)
		}
		return
	}
	var news [][2]string
	r.mu.Lock()
	for conv, turn := range active {
		if r.jobs[turn] == nil && r.seenTurns[conv] != turn {
			news = append(news, [2]string{conv, turn})
		}
	}
	r.mu.Unlock()
	for _, n := range news {
		w.started(n[0], n[1])
	}
	r.seenTurns = active
	if len(active) == 0 {
		r.seenTurns = nil
	}
}
