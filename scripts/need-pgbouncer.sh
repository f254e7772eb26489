#!/usr/bin/env bash
# Makes sure PgBouncer is installed: the tests and the fault suite start it
# in transaction mode in front of the test PostgreSQL (internal/harness/pgbouncer).
# Installs Debian's package when running as root; otherwise says what to do.
set -euo pipefail
have_pgbouncer() {
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]
}
if have_pgbouncer; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing PgBouncer (apt-get install pgbouncer)…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null
  have_pgbouncer && exit 0
fi
echo "PgBouncer is missing: install it with 'sudo apt-get install pgbouncer' (the pooler tests skip without it, except under CI=true)." >&2
if [ "${CI:-}" = true ]; then exit 1; fi
exit 0
