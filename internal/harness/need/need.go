// Package need says what a test lacks that the test set-up installs (a
// service, a program, an npm package): the test is skipped, or fails under
// CI=true, where a missing service is a failure, never a skip.
package need

import (
	"os"
	"path/filepath"
	"testing"
)

// Missing skips tb, or fails it under CI=true, with one sentence: what is
// missing and the script that installs it.
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	msg := what + ": run " + install + " to install it"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + " (CI=true: a missing service is a failure)")
	}
	tb.Skip(msg)
}

// NodePackage calls Missing unless the npm package pkg is installed in
// dir's node_modules.
func NodePackage(tb testing.TB, dir, pkg, install string) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err != nil {
		Missing(tb, "the "+pkg+" npm package is missing in "+dir, install)
	}
}
