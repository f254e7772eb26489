// Package sql holds the PostgreSQL schema of toolmark as numbered migrations
// (001_init.sql, 002_….sql, …) in the format of github.com/jackc/tern/v2's
// migrate package, embedded in the binary so that store.DB.Migrate and
// `toolmark migrate` need no files on disk.
package sql

import "embed"

// Migrations is the directory of migration files, applied in the order of
// their number prefix.
//
//go:embed *.sql
var Migrations embed.FS
