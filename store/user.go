package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/toolmark/toolmark"
)

// tokenPrefix starts every API token, so a leaked one is easy to recognise.
const tokenPrefix = "tm_"

// EnsureUser returns the user with the given unique name, creating it if it
// does not exist.
func (db *DB) EnsureUser(ctx context.Context, name string) (toolmark.User, error) {
	if err := checkText("user name", name, 200, true); err != nil {
		return toolmark.User{}, err
	}
	var u toolmark.User
	err := db.pool.QueryRow(ctx, `
		insert into users (name) values ($1)
		on conflict (name) do update set name = excluded.name
		returning id, name, created_at`, name).Scan(&u.ID, &u.Name, &u.CreatedAt)
	if err != nil {
		return toolmark.User{}, dbErr("ensuring user", "user", err)
	}
	return u, nil
}

// CreateToken creates an API token for the user and returns it: "tm_"
// followed by 32 random bytes in unpadded base64url. Only its SHA-256 hash
// is stored, so the token cannot be shown again.
func (db *DB) CreateToken(ctx context.Context, userID string) (string, error) {
	if !validID(userID) {
		return "", notFound("user")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("creating token: %w", err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	hash := sha256.Sum256([]byte(token))
	tag, err := db.pool.Exec(ctx, `
		insert into api_tokens (token_hash, user_id)
		select $1, id from users where id = $2`, hash[:], userID)
	if err != nil {
		return "", dbErr("creating token", "user", err)
	}
	if tag.RowsAffected() == 0 {
		return "", notFound("user")
	}
	return token, nil
}

// UserByToken returns the user an API token belongs to, or an
// EUNAUTHORIZED error when the token is unknown.
func (db *DB) UserByToken(ctx context.Context, token string) (toolmark.User, error) {
	if !strings.HasPrefix(token, tokenPrefix) || len(token) > 200 {
		return toolmark.User{}, toolmark.Errorf(toolmark.EUNAUTHORIZED, "invalid token")
	}
	hash := sha256.Sum256([]byte(token))
	var u toolmark.User
	err := db.pool.QueryRow(ctx, `
		select u.id, u.name, u.created_at
		from api_tokens t join users u on u.id = t.user_id
		where t.token_hash = $1`, hash[:]).Scan(&u.ID, &u.Name, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return toolmark.User{}, toolmark.Errorf(toolmark.EUNAUTHORIZED, "invalid token")
	} else if err != nil {
		return toolmark.User{}, fmt.Errorf("looking up token: %w", err)
	}
	return u, nil
}
