package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/toolmark/toolmark/internal/app"
	"github.com/toolmark/toolmark/simplifiedagent/tools"
)

// openDB parses the common database flags and opens the migrated store.
func openDB(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer) (*app.Database, []string, error) {
	var db dbFlags
	db.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	d, err := app.OpenDatabase(ctx, app.Config{DatabaseURL: db.url, DatabaseDirectURL: db.directURL, DataDir: db.dataDir, Logger: newLogger(stderr, db.logLevel, db.logJSON)})
	return d, fs.Args(), err
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d, _, err := openDB(ctx, fs, args, stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintln(stdout, "migrations applied; the database is up to date")
	return nil
}

func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: toolmark token create --user NAME")
	}
	fs := flag.NewFlagSet("toolmark token create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "the user the token is for (created if new)")
	d, _, err := openDB(ctx, fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	if *user == "" {
		return errors.New("--user is required")
	}
	u, err := d.DB.EnsureUser(ctx, *user)
	if err != nil {
		return err
	}
	tok, err := d.DB.CreateToken(ctx, u.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toolmark ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d, rest, err := openDB(ctx, fs, args, stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	if len(rest) != 1 {
		return errors.New("usage: toolmark ingest [flags] DIR")
	}
	n, err := tools.Ingest(ctx, d.DB, rest[0], func(source string, n int) {
		fmt.Fprintf(stderr, "ingested %d: %s\n", n, source)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d documents in the knowledge base from %s\n", n, rest[0])
	return nil
}
