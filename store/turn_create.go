package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolmark/toolmark"
)

// CreatedTurn is the outcome of one NewTurn of CreateTurns.
type CreatedTurn struct {
	Turn    toolmark.Turn
	Created bool
	Err     error
}

// CreateTurn creates a turn in one of the owner's conversations: the user
// message (complete, with its attachments), an empty assistant message
// (streaming, seq 0) and the turn (queued), all or nothing. A request
// repeating the IdempotencyKey of an earlier turn of the same conversation
// returns that turn with created false. While another turn of the
// conversation is queued or running it is ECONFLICT. Content must be
// non-empty valid UTF-8 without NUL bytes and within the size limit
// (EINVALID, ETOOLARGE). It is CreateTurns of one turn.
func (db *DB) CreateTurn(ctx context.Context, nt NewTurn) (turn toolmark.Turn, created bool, err error) {
	r := db.CreateTurns(ctx, []NewTurn{nt})[0]
	return r.Turn, r.Created, r.Err
}

// maxCreateRounds bounds how often a turn refused for no reason left to
// see (the active turn that stood in its way ended meanwhile) is tried
// again before it is ECONFLICT.
const maxCreateRounds = 3

// CreateTurns creates several turns at once, each as CreateTurn describes,
// with one statement for the group: the unique indexes decide the races
// (one active turn per conversation, one turn per idempotency key; within
// the group, the first request of a conversation wins). The turns the
// statement could not create are explained by one more query: the earlier
// turn of the key, ENOTFOUND or ECONFLICT. The result has one entry per
// input, in order.
func (db *DB) CreateTurns(ctx context.Context, nts []NewTurn) []CreatedTurn {
	out := make([]CreatedTurn, len(nts))
	var pending []int
	for i, nt := range nts {
		if out[i].Err = checkNewTurn(nt, db.maxContent); out[i].Err == nil {
			pending = append(pending, i)
		}
	}
	for round := 1; len(pending) > 0; round++ {
		refused, err := db.insertTurns(ctx, nts, pending, out)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23503" && len(pending) == 1 {
			// An attachment deleted while the turn was written: explained
			// below.
			refused, err = pending, nil
		}
		if err != nil && len(pending) > 1 {
			// One bad turn fails the statement: the others must not
			// fail with it.
			db.log.Warn("creating turns together failed; creating them one by one", "turns", len(pending), "err", err)
			refused = nil
			for _, i := range pending {
				r, err := db.insertTurns(ctx, nts, []int{i}, out)
				if err != nil {
					out[i].Err = dbErr("creating turn", "turn", err)
				}
				refused = append(refused, r...)
			}
		} else if err != nil {
			out[pending[0]].Err = dbErr("creating turn", "turn", err)
		}
		if pending, err = db.explainRefused(ctx, nts, refused, out); err != nil {
			for _, i := range pending {
				out[i].Err = err
			}
			return out
		}
		if round == maxCreateRounds {
			for _, i := range pending {
				out[i].Err = errTurnActive
			}
			return out
		}
	}
	return out
}

var errTurnActive = toolmark.Errorf(toolmark.ECONFLICT, "a turn is already active in this conversation")

// checkNewTurn returns why nt cannot be created before the database is asked.
func checkNewTurn(nt NewTurn, maxContent int) error {
	if !validID(nt.ConversationID) || !validID(nt.OwnerID) {
		return notFound("conversation")
	}
	if nt.Replaces != "" && !validID(nt.Replaces) {
		return notFound("message")
	}
	for _, id := range nt.Input.Attachments {
		if !validID(id) {
			return uploadNotFound(id)
		}
	}
	if err := checkText("content", nt.Input.Content, maxContent, true); err != nil {
		return err
	}
	if err := checkText("idempotency key", nt.IdempotencyKey, maxIdempotencyKeyBytes, false); err != nil {
		return err
	}
	if nt.Queued != nil {
		if _, err := eventTypeCode(nt.Queued.Type); err != nil {
			return err
		}
	}
	return nil
}

// newTurnArgs are the columns of the turns insertTurns writes, one array
// entry per turn (attachments: one entry per attachment, naming its turn
// by its 1-based position in the group).
type newTurnArgs struct {
	convs, owners, contents, keys, titles, models, defaults, replaces, leases, qdata []string
	ttls                                                                             []time.Duration
	qtypes                                                                           []*int16
	qtimes                                                                           []time.Time
	attTurn, attPos                                                                  []int32
	attIDs                                                                           []string
}

func (a *newTurnArgs) add(nt NewTurn) {
	a.convs, a.owners, a.contents = append(a.convs, nt.ConversationID), append(a.owners, nt.OwnerID), append(a.contents, nt.Input.Content)
	a.keys, a.titles, a.replaces = append(a.keys, nt.IdempotencyKey), append(a.titles, nt.Title), append(a.replaces, nt.Replaces)
	a.models, a.defaults = append(a.models, nt.Input.Model), append(a.defaults, nt.DefaultModel)
	a.leases, a.ttls = append(a.leases, nt.LeaseOwner), append(a.ttls, nt.LeaseTTL)
	var qtype *int16
	var qdata string
	var qtime time.Time
	if nt.Queued != nil {
		code, _ := eventTypeCode(nt.Queued.Type) // checked by checkNewTurn
		qtype, qdata, qtime = &code, string(nt.Queued.Data), nt.Queued.Time
	}
	a.qtypes, a.qdata, a.qtimes = append(a.qtypes, qtype), append(a.qdata, qdata), append(a.qtimes, qtime)
	for k, id := range nt.Input.Attachments {
		a.attTurn, a.attPos, a.attIDs = append(a.attTurn, int32(len(a.convs))), append(a.attPos, int32(k+1)), append(a.attIDs, id)
	}
}

// insertTurnsSQL writes the turns of newTurnArgs that can be created
// outright — their conversation is the owner's, the message they replace
// is a live question of it, no turn of it is active and their key is new
// — and returns each one's position in the group with its columns.
var insertTurnsSQL = `
	with input as (
		select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::text[], $9::text[], $10::interval[], $11::int2[], $12::text[], $13::timestamptz[])
			with ordinality as i(conv, owner, content, key, title, model_asked, model_default,
				replaces, lease, ttl, qtype, qdata, qtime, ord)
	), ok as (
		select i.*, time_ordered_id() as tid, time_ordered_id() as umid, time_ordered_id() as amid,
			coalesce(nullif(i.model_asked, ''), nullif(c.model, ''), i.model_default) as model,
			r.pos as replaced_pos, coalesce(r.version_of, r.id) as version_of
		from input i join conversations c on c.id = i.conv and c.owner_id = i.owner
		left join messages r on i.replaces <> '' and r.id = i.replaces and r.conversation_id = i.conv
			and r.role = 'user' and r.replaced_by is null
		where (i.replaces = '' or r.id is not null)
		  and not exists ( -- every attachment is still the owner's upload
			select 1 from unnest($14::int4[], $16::text[]) as x(ord, id)
			where x.ord = i.ord and not exists (select 1 from uploads u where u.id = x.id and u.owner_id = i.owner))
	), t as (
		insert into turns (id, conversation_id, user_message_id, assistant_message_id, status, idempotency_key,
			lease_owner, lease_expires_at, model)
		select tid, conv, umid, amid, 'queued', nullif(key, ''), nullif(lease, ''),
			case when lease = '' then null else now() + ttl end, model
		from ok
		order by ord -- the first request of a conversation wins
		on conflict do nothing
		returning *
	), made as (
		select ok.*, t.num from ok join t on t.id = ok.tid
	), r as (
		update messages m set replaced_by = made.tid from made
		where made.replaced_pos is not null and m.conversation_id = made.conv
		  and m.replaced_by is null and m.pos >= made.replaced_pos
	), m as (
		insert into messages (id, conversation_id, turn_id, role, content, status, version_of)
		select umid, conv, tid, 'user', content, 'complete', version_of from made
		union all
		select amid, conv, tid, 'assistant', '', 'streaming', null from made
	), a as (
		insert into message_attachments (message_id, upload_id, pos)
		select made.umid, u.id, x.pos from unnest($14::int4[], $15::int4[], $16::text[]) as x(ord, pos, id)
		join made on made.ord = x.ord join uploads u on u.id = x.id and u.owner_id = made.owner
	), c as (
		update conversations c set updated_at = now(), title = case when c.title = '' then made.title else c.title end,
			model = made.model
		from made where c.id = made.conv
	), e as (
		insert into events (turn, time, seq, type, data)
		select num, qtime, 1, qtype, qdata::json from made where qtype is not null
	)
	select made.ord, ` + newTurnColumns + ` from t join made on made.tid = t.id`

// insertTurns runs insertTurnsSQL for the turns of nts at positions
// pending, sets out for those it created and returns the others.
func (db *DB) insertTurns(ctx context.Context, nts []NewTurn, pending []int, out []CreatedTurn) (refused []int, err error) {
	var a newTurnArgs
	for _, i := range pending {
		a.add(nts[i])
	}
	rows, err := db.pool.Query(ctx, insertTurnsSQL, a.convs, a.owners, a.contents, a.keys, a.titles, a.models, a.defaults,
		a.replaces, a.leases, a.ttls, a.qtypes, a.qdata, a.qtimes, a.attTurn, a.attPos, a.attIDs)
	if err != nil {
		return nil, err
	}
	done := make([]bool, len(pending))
	for rows.Next() {
		var ord int
		var ts turnScan
		if err := rows.Scan(append([]any{&ord}, ts.dest()...)...); err != nil {
			rows.Close()
			return nil, err
		}
		i := pending[ord-1]
		t := ts.turn()
		if nts[i].Queued != nil {
			t.LastSeq = 1
		}
		done[ord-1], out[i] = true, CreatedTurn{Turn: t, Created: true}
	}
	if err := rows.Err(); err != nil {
		// Nothing was written: the statement is one transaction.
		for k, i := range pending {
			if done[k] {
				out[i] = CreatedTurn{}
			}
		}
		return nil, err
	}
	for k, i := range pending {
		if !done[k] {
			refused = append(refused, i)
		}
	}
	return refused, nil
}

// explainRefused sets out for the turns of nts at positions refused, which
// insertTurns did not create: the earlier turn of the same key, or why
// not. It returns those with no reason left (the turn in their way has
// ended since): they may be tried again.
func (db *DB) explainRefused(ctx context.Context, nts []NewTurn, refused []int, out []CreatedTurn) (again []int, err error) {
	if len(refused) == 0 {
		return nil, nil
	}
	var convs, owners, keys, replaces []string
	for _, i := range refused {
		convs, owners = append(convs, nts[i].ConversationID), append(owners, nts[i].OwnerID)
		keys, replaces = append(keys, nts[i].IdempotencyKey), append(replaces, nts[i].Replaces)
	}
	rows, err := db.pool.Query(ctx, `
		select i.ord, o.ok, coalesce(p.id, ''), p.id is null and o.ok and (i.replaces = '' or exists (
				select 1 from messages m where m.id = i.replaces and m.conversation_id = i.conv and m.role = 'user' and m.replaced_by is null)),
			exists (select 1 from turns a where a.conversation_id = i.conv and a.finished_at is null)
		from unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality as i(conv, owner, key, replaces, ord)
		cross join lateral (select exists (select 1 from conversations c where c.id = i.conv and c.owner_id = i.owner) as ok) o
		left join turns p on o.ok and i.key <> '' and p.conversation_id = i.conv and p.idempotency_key = i.key`,
		convs, owners, keys, replaces)
	if err != nil {
		return refused, dbErr("explaining refused turns", "turn", err)
	}
	var prevIdx []int
	var prevIDs []string
	for rows.Next() {
		var ord int
		var convOK, replaceOK, active bool
		var prev string
		if err := rows.Scan(&ord, &convOK, &prev, &replaceOK, &active); err != nil {
			rows.Close()
			return refused, dbErr("explaining refused turns", "turn", err)
		}
		i := refused[ord-1]
		switch {
		case !convOK:
			out[i].Err = notFound("conversation")
		case prev != "":
			prevIdx, prevIDs = append(prevIdx, i), append(prevIDs, prev)
		case !replaceOK:
			out[i].Err = notFound("message")
		case active:
			out[i].Err = errTurnActive
		default:
			again = append(again, i)
		}
	}
	if err := rows.Err(); err != nil {
		return refused, dbErr("explaining refused turns", "turn", err)
	}
	db.earlierTurns(ctx, prevIdx, prevIDs, out)
	// Nothing else in the way: an attachment may no longer be the
	// owner's upload (deleted meanwhile).
	return slices.DeleteFunc(again, func(i int) bool {
		if len(nts[i].Input.Attachments) == 0 {
			return false
		}
		_, out[i].Err = db.Uploads(ctx, nts[i].OwnerID, nts[i].Input.Attachments, false)
		return out[i].Err != nil
	}), nil
}

// earlierTurns sets out[idx[k]] to the earlier turn ids[k], not created.
func (db *DB) earlierTurns(ctx context.Context, idx []int, ids []string, out []CreatedTurn) {
	if len(ids) == 0 {
		return
	}
	rows, err := db.pool.Query(ctx, `select `+turnColumns+` from turns t where t.id = any($1)`, ids)
	var ts []toolmark.Turn
	if err == nil {
		ts, err = collectTurns(rows)
	}
	if err != nil {
		for _, i := range idx {
			out[i].Err = dbErr("looking up idempotency key", "turn", err)
		}
		return
	}
	byID := make(map[string]toolmark.Turn, len(ts))
	for _, t := range ts {
		byID[t.ID] = t
	}
	for k, i := range idx {
		if t, ok := byID[ids[k]]; ok {
			out[i] = CreatedTurn{Turn: t}
		} else {
			out[i].Err = fmt.Errorf("looking up idempotency key: turn %s gone", ids[k])
		}
	}
}
