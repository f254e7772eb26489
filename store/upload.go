package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// uploadColumns are an upload's columns for scanUpload, without its bytes.
const uploadColumns = `id, name, media_type, size, sha256, created_at`

// uploadColumnsOf is uploadColumns of the table alias a.
func uploadColumnsOf(a string) string {
	return a + ".id, " + a + ".name, " + a + ".media_type, " + a + ".size, " + a + ".sha256, " + a + ".created_at"
}

func scanUpload(row pgx.Row, more ...any) (toolmark.Upload, error) {
	var u toolmark.Upload
	var sum []byte
	err := row.Scan(append([]any{&u.ID, &u.Name, &u.MediaType, &u.Size, &sum, &u.CreatedAt}, more...)...)
	u.SHA256, u.URL = hex.EncodeToString(sum), toolmark.UploadURL(u.ID)
	return u, err
}

// CreateUpload keeps a file the owner uploaded: name and mediaType as
// toolmark.CleanUploadName and SniffUpload gave them. The same bytes
// uploaded again by the same owner are the upload made the first time
// (its name kept). A new file that would bring the owner's uploads past
// maxTotal bytes (when positive) is ETOOLARGE, however many uploads race:
// the owner's row is locked while the total is read and the file written.
func (db *DB) CreateUpload(ctx context.Context, ownerID, name, mediaType string, data []byte, maxTotal int64) (toolmark.Upload, error) {
	if !validID(ownerID) {
		return toolmark.Upload{}, notFound("user")
	}
	if err := checkText("file name", name, toolmark.MaxUploadName, true); err != nil {
		return toolmark.Upload{}, err
	}
	sum := sha256.Sum256(data)
	// One round trip: the batch is one implicit transaction, and the
	// insert, a statement after the lock, reads the total as the uploads
	// that held the lock before it left it.
	var b pgx.Batch
	if maxTotal > 0 {
		b.Queue(`select 1 from users where id = $1 for update`, ownerID)
	}
	b.Queue(`
		with old as (
			select `+uploadColumns+` from uploads where owner_id = $1 and sha256 = $2
		), ins as (
			insert into uploads (owner_id, sha256, name, media_type, size, data)
			select $1, $2, $3, $4, $5::bigint, $6
			where not exists (select 1 from old)
			  and ($7::bigint <= 0 or (select coalesce(sum(size), 0) from uploads where owner_id = $1) + $5::bigint <= $7::bigint)
			on conflict (owner_id, sha256) do nothing
			returning `+uploadColumns+`
		)
		select * from old union all select * from ins`,
		ownerID, sum[:], name, mediaType, int64(len(data)), data, maxTotal)
	br := db.pool.SendBatch(ctx, &b)
	var err error
	if maxTotal > 0 {
		_, err = br.Exec()
	}
	var u toolmark.Upload
	if err == nil {
		u, err = scanUpload(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Over the total, or the same file uploaded at the same moment.
		u, err = scanUpload(db.pool.QueryRow(ctx, `select `+uploadColumns+` from uploads where owner_id = $1 and sha256 = $2`, ownerID, sum[:]))
		if errors.Is(err, pgx.ErrNoRows) {
			return toolmark.Upload{}, toolmark.Errorf(toolmark.ETOOLARGE, "file %q would bring your uploads past %d bytes", name, maxTotal)
		}
	}
	return u, dbErr("creating upload", "upload", err)
}

// GetUpload returns one of the owner's uploads with its bytes; another
// user's upload is ENOTFOUND.
func (db *DB) GetUpload(ctx context.Context, ownerID, id string) (toolmark.Upload, error) {
	us, err := db.Uploads(ctx, ownerID, []string{id}, true)
	if err != nil {
		return toolmark.Upload{}, err
	}
	return us[0], nil
}

// Uploads returns the owner's uploads of ids, in their order, with their
// bytes when withData. An id that is not one of the owner's uploads (another user's
// too) is ENOTFOUND naming it.
func (db *DB) Uploads(ctx context.Context, ownerID string, ids []string, withData bool) ([]toolmark.Upload, error) {
	for _, id := range ids {
		if !validID(ownerID) || !validID(id) {
			return nil, uploadNotFound(id)
		}
	}
	rows, err := db.pool.Query(ctx, `select `+uploadColumns+`, case when $3 then data end from uploads where owner_id = $1 and id = any($2)`, ownerID, texts(ids), withData)
	if err != nil {
		return nil, dbErr("reading uploads", "upload", err)
	}
	byID := map[string]toolmark.Upload{}
	for rows.Next() {
		var data []byte
		u, err := scanUpload(rows, &data)
		if err != nil {
			rows.Close()
			return nil, dbErr("reading uploads", "upload", err)
		}
		u.Data = data
		byID[u.ID] = u
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("reading uploads", "upload", err)
	}
	out := make([]toolmark.Upload, len(ids))
	for i, id := range ids {
		u, ok := byID[id]
		if !ok {
			return nil, uploadNotFound(id)
		}
		out[i] = u
	}
	return out, nil
}

// uploadNotFound is the ENOTFOUND error for an attachment id (hostile
// text: quoted, and cut).
func uploadNotFound(id string) error {
	if len(id) > 80 {
		id = strings.ToValidUTF8(id[:80], "") + "…"
	}
	return toolmark.Errorf(toolmark.ENOTFOUND, "upload %q not found", id)
}

// MessageAttachments returns the uploads (without their bytes) that each
// of the messages carries, in order, by message id; a message without
// attachments is not in the map.
func (db *DB) MessageAttachments(ctx context.Context, messageIDs []string) (map[string][]toolmark.Upload, error) {
	out := map[string][]toolmark.Upload{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `
		select `+uploadColumnsOf("u")+`, a.message_id from message_attachments a join uploads u on u.id = a.upload_id
		where a.message_id = any($1) order by a.message_id, a.pos`, texts(messageIDs))
	if err != nil {
		return nil, dbErr("reading attachments", "message", err)
	}
	defer rows.Close()
	for rows.Next() {
		var mid string
		var u toolmark.Upload
		if u, err = scanUpload(rows, &mid); err != nil {
			return nil, dbErr("reading attachments", "message", err)
		}
		out[mid] = append(out[mid], u)
	}
	return out, dbErr("reading attachments", "message", rows.Err())
}

// MessageUploads returns the uploads a message carries, in order, with
// their bytes and the text read from a PDF (what the agent sends the
// model; they were checked to be the owner's when the turn started).
func (db *DB) MessageUploads(ctx context.Context, messageID string) ([]toolmark.Upload, error) {
	rows, err := db.pool.Query(ctx, `
		select `+uploadColumnsOf("u")+`, u.data, coalesce(u.text, '') from message_attachments a
		join uploads u on u.id = a.upload_id where a.message_id = $1 order by a.pos`, messageID)
	if err != nil {
		return nil, dbErr("reading attachments", "message", err)
	}
	defer rows.Close()
	var out []toolmark.Upload
	for rows.Next() {
		var data []byte
		var text string
		u, err := scanUpload(rows, &data, &text)
		if err != nil {
			return nil, dbErr("reading attachments", "message", err)
		}
		u.Data, u.Text = data, text
		out = append(out, u)
	}
	return out, dbErr("reading attachments", "message", rows.Err())
}

// UploadText returns the text read from one of the owner's uploads (a
// PDF) and whether it was read; another user's upload is ENOTFOUND.
func (db *DB) UploadText(ctx context.Context, ownerID, id string) (text string, read bool, err error) {
	if !validID(ownerID) || !validID(id) {
		return "", false, uploadNotFound(id)
	}
	var t *string
	err = db.pool.QueryRow(ctx, `select text from uploads where id = $1 and owner_id = $2`, id, ownerID).Scan(&t)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, uploadNotFound(id)
	} else if err != nil || t == nil {
		return "", false, dbErr("reading upload text", "upload", err)
	}
	return *t, true, nil
}

// SetUploadText keeps the text read from an upload ("" for none).
func (db *DB) SetUploadText(ctx context.Context, id, text string) error {
	if err := checkText("upload text", text, 16<<20, false); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `update uploads set text = $2 where id = $1`, id, text)
	return dbErr("keeping upload text", "upload", err)
}

// TurnAttachments returns the uploads (without their bytes; with the text
// read from a PDF) of the questions of the turns, in order, by turn id; a
// turn whose question carries none is not in the map.
func (db *DB) TurnAttachments(ctx context.Context, turnIDs []string) (map[string][]toolmark.Upload, error) {
	out := map[string][]toolmark.Upload{}
	if len(turnIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `
		select `+uploadColumnsOf("u")+`, coalesce(u.text, ''), t.id from turns t
		join message_attachments a on a.message_id = t.user_message_id join uploads u on u.id = a.upload_id
		where t.id = any($1) order by t.id, a.pos`, texts(turnIDs))
	if err != nil {
		return nil, dbErr("reading attachments", "turn", err)
	}
	defer rows.Close()
	for rows.Next() {
		var text, tid string
		u, err := scanUpload(rows, &text, &tid)
		if err != nil {
			return nil, dbErr("reading attachments", "turn", err)
		}
		u.Text = text
		out[tid] = append(out[tid], u)
	}
	return out, dbErr("reading attachments", "turn", rows.Err())
}

// UploadBytes returns the bytes of the uploads ids, by id (for the agent:
// the uploads of a conversation's questions, checked when they were
// attached).
func (db *DB) UploadBytes(ctx context.Context, ids []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `select id, data from uploads where id = any($1)`, texts(ids))
	if err != nil {
		return nil, dbErr("reading uploads", "upload", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, dbErr("reading uploads", "upload", err)
		}
		out[id] = data
	}
	return out, dbErr("reading uploads", "upload", rows.Err())
}

// DeleteUpload deletes one of the owner's uploads; another user's, or
// none, is ENOTFOUND. An upload a stored question carries is kept, so
// that its conversation still shows and sends it: ECONFLICT, until the
// conversations that hold it are deleted. The upload's row is locked
// before the attachments are counted (one batch, one transaction), so a
// question being written with it either holds it first or fails.
func (db *DB) DeleteUpload(ctx context.Context, ownerID, id string) error {
	if !validID(ownerID) || !validID(id) {
		return uploadNotFound(id)
	}
	var b pgx.Batch
	b.Queue(`select 1 from uploads where id = $1 and owner_id = $2 for update`, id, ownerID)
	b.Queue(`
		with d as (
			delete from uploads where id = $1 and owner_id = $2
			  and not exists (select 1 from message_attachments where upload_id = $1)
			returning 1
		)
		select (select count(*) from d), (select count(*) from message_attachments where upload_id = $1),
			coalesce((select name from uploads where id = $1 and owner_id = $2), '')`, id, ownerID)
	br := db.pool.SendBatch(ctx, &b)
	var deleted, attached int
	var name string
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&deleted, &attached, &name)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return dbErr("deleting upload", "upload", err)
	case deleted == 1:
		return nil
	case name == "":
		return uploadNotFound(id)
	}
	return toolmark.Errorf(toolmark.ECONFLICT, "file %q is attached to %d question(s) and is kept while they are: delete their conversations first", name, attached)
}
