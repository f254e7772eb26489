#!/usr/bin/env bash
# Makes sure PostgreSQL server binaries are installed (toolmark starts its own
# server from them unless DATABASE_URL / TEST_DATABASE_URL is set). Installs
# Debian's package when running as root; otherwise says what to do.
set -euo pipefail
have_pg() {
  command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 && return 0
  compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null 2>&1
}
if [ -n "${DATABASE_URL:-}${TEST_DATABASE_URL:-}" ] || have_pg; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing PostgreSQL server packages (apt-get install postgresql)…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  have_pg && exit 0
fi
echo "PostgreSQL server binaries are missing: install them with 'sudo apt-get install postgresql' or set DATABASE_URL (TEST_DATABASE_URL for tests) to a server you run." >&2
exit 1
