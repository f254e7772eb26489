package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// maxDocumentBytes limits a knowledge-base document's body.
const maxDocumentBytes = 16 << 20

// UpsertDocument stores a knowledge-base document by its unique source
// (file path or URL), replacing the title and body of an earlier version,
// and returns its id.
func (db *DB) UpsertDocument(ctx context.Context, source, title, body string) (string, error) {
	if err := checkText("source", source, 2048, true); err != nil {
		return "", err
	}
	if err := checkText("title", title, maxTitleBytes, false); err != nil {
		return "", err
	}
	if err := checkText("body", body, maxDocumentBytes, false); err != nil {
		return "", err
	}
	var id string
	err := db.pool.QueryRow(ctx, `
		insert into documents (source, title, body) values ($1, $2, $3)
		on conflict (source) do update set title = excluded.title, body = excluded.body, updated_at = now()
		returning id`, source, title, body).Scan(&id)
	if err != nil {
		return "", dbErr("saving document", "document", err)
	}
	return id, nil
}

// CountDocuments returns how many documents the knowledge base holds.
func (db *DB) CountDocuments(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `select count(*) from documents`).Scan(&n); err != nil {
		return 0, dbErr("counting documents", "document", err)
	}
	return n, nil
}

// SearchDocuments runs a web-search style query (quoted phrases, or, -word;
// English stemming) over the knowledge base and returns up to limit hits
// (default 5, at most 50), best first. Title matches weigh more than body
// matches. Snippets are plain text; matched words are set in « and ».
func (db *DB) SearchDocuments(ctx context.Context, query string, limit int) ([]toolmark.DocumentHit, error) {
	if err := checkText("query", query, 1000, false); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, 50)
	// A search is bulk work; the group commit, which every live event
	// waits for, shares the database's processors with it (see
	// searchSlots).
	select {
	case db.searches <- struct{}{}:
		defer func() { <-db.searches }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The snippets are made here (see headline) from the bodies of the
	// hits, with the query's lexemes; a body too long to carry gets
	// ts_headline's snippet instead. The bodies come from docs, and from
	// the database only for the hits docs does not hold at their version.
	rows, err := db.pool.Query(ctx, `
		select top.id, top.source, top.title, top.rank, top.version,
			case when top.long then ts_headline('english', top.body, top.q, 'StartSel=«, StopSel=», MaxWords=35, MinWords=15') end,
			(select tsvector_to_array(to_tsvector('english', $1)))
		from (
			select d.id, d.source, d.title, d.body, q, ts_rank_cd(d.search, q) as rank, octet_length(d.body) > $3 as long,
				`+docVersion+` as version
			from documents d, websearch_to_tsquery('english', $1) q
			where d.search @@ q
			order by rank desc, d.id
			limit $2
		) top
		order by top.rank desc, top.id`, query, limit, headlineMaxBody)
	if err != nil {
		return nil, dbErr("searching documents", "query", err)
	}
	var lexemes []string
	var missing []string // the hits whose bodies docs lacks
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (toolmark.DocumentHit, error) {
		var h toolmark.DocumentHit
		var rank float32
		var version string
		var long *string
		if err := r.Scan(&h.ID, &h.Source, &h.Title, &rank, &version, &long, &lexemes); err != nil {
			return h, err
		}
		h.Rank = float64(rank)
		if long != nil {
			h.Snippet = strings.Join(strings.Fields(*long), " ")
		} else if d := db.docs.get(h.ID, version); d != nil {
			h.Snippet = headlineOf(d.body, d.words, lexemes)
		} else {
			missing = append(missing, h.ID)
		}
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("searching documents: %w", err)
	}
	if len(missing) > 0 {
		read, err := db.readBodies(ctx, missing)
		if err != nil {
			return nil, err
		}
		for i := range hits {
			if d := read[hits[i].ID]; d != nil { // a hit's id is unique in the search
				hits[i].Snippet = headlineOf(d.body, d.words, lexemes)
			}
		}
	}
	if hits == nil {
		hits = []toolmark.DocumentHit{}
	}
	return hits, nil
}

// docVersion is the version of a documents row d: its xmin, which every
// update changes, with its updated_at.
const docVersion = `d.xmin::text || '/' || d.updated_at::text`

// readBodies reads the bodies of the documents ids into db.docs, each at
// the version it has now (a document replaced since the search found it
// gets its snippet from its new body), and returns them by id.
func (db *DB) readBodies(ctx context.Context, ids []string) (map[string]*cachedDoc, error) {
	rows, err := db.pool.Query(ctx, `select d.id, `+docVersion+`, d.body from documents d where d.id = any($1)`, ids)
	if err != nil {
		return nil, dbErr("searching documents", "query", err)
	}
	read := make(map[string]*cachedDoc, len(ids))
	var id, version, body string
	_, err = pgx.ForEachRow(rows, []any{&id, &version, &body}, func() error {
		read[id] = db.docs.put(id, version, body)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("searching documents: %w", err)
	}
	return read, nil
}
