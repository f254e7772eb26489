// Package pgadmin creates and drops databases on a PostgreSQL server, for
// the tests and tools that want a database of their own: the test
// databases of pgtest, the run of the fault-injection suite.
//
// A server is named by a connection string of either form pgx reads: a
// URL (postgres://user@host:port/db?…) or keyword/value pairs
// (host=… user=… dbname=…).
package pgadmin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// WithDatabase returns the connection string conn naming database name
// instead of its own: a URL's path is replaced, a keyword/value string
// gets a dbname that overrides any before it.
func WithDatabase(conn, name string) string {
	u, err := url.Parse(conn)
	if err != nil || u.Scheme == "" {
		return conn + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}

// RandomName returns prefix followed by 16 random hex digits: a database
// name no other run picks.
func RandomName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Create creates database name on the server at admin, as a copy of
// template unless template is empty, and returns its connection string.
func Create(ctx context.Context, admin, name, template string) (string, error) {
	sql := "create database " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " template " + pgx.Identifier{template}.Sanitize()
	}
	if err := Exec(ctx, admin, sql); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return WithDatabase(admin, name), nil
}

// Drop drops database name on the server at admin, if it exists, closing
// the connections still open to it.
func Drop(ctx context.Context, admin, name string) error {
	if err := Exec(ctx, admin, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
		return fmt.Errorf("dropping database %s: %w", name, err)
	}
	return nil
}

// Exec runs one statement on a connection of its own to the server at
// admin: CREATE and DROP DATABASE cannot run inside a transaction.
func Exec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
