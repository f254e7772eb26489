package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
	"github.com/toolmark/toolmark/toolcallmarkup"
)

// ConversationList is a page of an owner's conversations, most recently
// updated first; Next, when not "", reads the page after it.
type ConversationList struct {
	Conversations []toolmark.Conversation
	Next          string
}

// DefaultPageConversations is how many conversations a page holds unless
// asked.
const DefaultPageConversations = 50

// ListConversationsPage returns a page of the owner's conversations, most
// recently updated first, after the cursor after ("" for the first page),
// each marked Running while one of its turns is active. With query set,
// only the conversations whose title or (live) messages contain it, case
// insensitively, each with a snippet of the match.
func (db *DB) ListConversationsPage(ctx context.Context, ownerID, query, after string, limit int) (ConversationList, error) {
	out := ConversationList{Conversations: []toolmark.Conversation{}}
	if !validID(ownerID) {
		return out, nil
	}
	if limit <= 0 || limit > MaxPageMessages {
		limit = DefaultPageConversations
	}
	curTime, curID, err := parseListCursor(after)
	if err != nil {
		return out, err
	}
	if err := checkText("search", query, 500, false); err != nil {
		return out, err
	}
	pattern := ""
	if q := strings.TrimSpace(query); q != "" {
		pattern = "%" + likeEscaper.Replace(q) + "%"
	}
	rows, err := db.pool.Query(ctx, `
		select c.id, c.owner_id, c.title, c.summary, c.model, c.created_at, c.updated_at,
			exists (select 1 from turns t where t.conversation_id = c.id and t.finished_at is null),
			coalesce(h.content, ''), coalesce(h.id::text, '')
		from conversations c
		left join lateral (
			select m.content, m.id from messages m
			where $2 <> '' and m.conversation_id = c.id and m.replaced_by is null and m.content ilike $2
			order by m.pos desc limit 1) h on true
		where c.owner_id = $1
		  and ($3::timestamptz is null or (c.updated_at, c.id) < ($3, $4))
		  and ($2 = '' or c.title ilike $2 or exists (
			select 1 from messages m where m.conversation_id = c.id and m.replaced_by is null and m.content ilike $2))
		order by c.updated_at desc, c.id desc
		limit $5`, ownerID, pattern, curTime, curID, limit+1)
	if err != nil {
		return out, dbErr("listing conversations", "conversation", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.Conversation, error) {
		var c toolmark.Conversation
		var hit string
		err := r.Scan(&c.ID, &c.OwnerID, &c.Title, &c.Summary, &c.Model, &c.CreatedAt, &c.UpdatedAt, &c.Running, &hit, &c.HitMessageID)
		if hit != "" {
			c.Snippet = Snippet(hit, query, 160)
		}
		return c, err
	})
	if err != nil {
		return out, dbErr("listing conversations", "conversation", err)
	}
	if len(cs) > limit {
		cs = cs[:limit]
		last := cs[limit-1]
		out.Next = strconv.FormatInt(last.UpdatedAt.UnixMicro(), 10) + "_" + last.ID
	}
	if cs != nil {
		out.Conversations = cs
	}
	return out, nil
}

// likeEscaper escapes the wildcards of a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// parseListCursor reads a cursor of ListConversationsPage.
func parseListCursor(s string) (*time.Time, string, error) {
	if s == "" {
		return nil, "", nil
	}
	us, id, ok := strings.Cut(s, "_")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || !validID(id) {
		return nil, "", toolmark.Errorf(toolmark.EINVALID, "after must be a cursor a list returned")
	}
	t := time.UnixMicro(n)
	return &t, id, nil
}

// RenameConversation sets the title of one of the owner's conversations
// and returns it.
func (db *DB) RenameConversation(ctx context.Context, ownerID, id, title string) (toolmark.Conversation, error) {
	if !validID(id) || !validID(ownerID) {
		return toolmark.Conversation{}, notFound("conversation")
	}
	if err := checkText("title", title, maxTitleBytes, false); err != nil {
		return toolmark.Conversation{}, err
	}
	c, err := scanConversation(db.pool.QueryRow(ctx, `
		update conversations set title = $3 where id = $1 and owner_id = $2
		returning `+conversationColumns, id, ownerID, title))
	if err != nil {
		return toolmark.Conversation{}, dbErr("renaming conversation", "conversation", err)
	}
	return c, nil
}

// GetMessage returns one message of the owner's conversations, replaced or
// not.
func (db *DB) GetMessage(ctx context.Context, ownerID, id string) (toolmark.Message, error) {
	if !validID(id) || !validID(ownerID) {
		return toolmark.Message{}, notFound("message")
	}
	m, err := scanMessage(db.pool.QueryRow(ctx, `
		select `+messageColumns+` from messages m join conversations c on c.id = m.conversation_id
		where m.id = $1 and c.owner_id = $2`, id, ownerID))
	if err != nil {
		return toolmark.Message{}, dbErr("getting message", "message", err)
	}
	return m, nil
}

// ReplacedMessages returns the messages of one of the owner's
// conversations that retries, regenerations and edits replaced, oldest
// first, each with the turn that replaced it.
func (db *DB) ReplacedMessages(ctx context.Context, ownerID, id string) ([]toolmark.Message, error) {
	if _, err := db.GetConversation(ctx, ownerID, id); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `
		select `+messageColumns+` from messages m
		where m.conversation_id = $1 and m.replaced_by is not null order by m.pos`, id)
	if err != nil {
		return nil, dbErr("listing replaced messages", "conversation", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.Message, error) { return scanMessage(r) })
	if err != nil {
		return nil, fmt.Errorf("listing replaced messages: %w", err)
	}
	if ms == nil {
		ms = []toolmark.Message{}
	}
	return ms, nil
}

// Snippet returns about n bytes of content's text (as a reader sees it:
// without ToolCall elements or Markdown's markers) around the first case-insensitive match of
// query, on one line, with "…" where it was cut.
func Snippet(content, query string, n int) string {
	text := strings.Join(strings.Fields(plainText(toolcallmarkup.Text(content))), " ")
	i := strings.Index(strings.ToLower(text), strings.ToLower(strings.TrimSpace(query)))
	if i < 0 {
		i = 0
	}
	start := max(0, i-n/3)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	out := text[start:]
	if len(out) > n {
		out = toolcallmarkup.Shorten(out, n)
	}
	if start > 0 {
		out = "…" + out
	}
	return out
}

var (
	mdLink    = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)                                                      // [text](url), ![alt](src) → text
	mdMarkers = regexp.MustCompile("(?m)^\\s{0,3}(?:#{1,6}\\s+|>\\s?|[-*+]\\s+(?:\\[[ xX]\\]\\s+)?|\\d+[.)]\\s+)") // block markers
	mdInline  = strings.NewReplacer("**", "", "__", "", "`", "", "~~", "")
)

// plainText drops the Markdown markers of md that a reader does not see:
// emphasis, code ticks, heading, quote and list markers, and link targets.
func plainText(md string) string {
	md = mdLink.ReplaceAllString(md, "$1")
	md = mdMarkers.ReplaceAllString(md, "")
	return mdInline.Replace(md)
}
