#!/usr/bin/env bash
# Makes sure the MCP tests can run: Node.js and the reference MCP servers of
# internal/harness/mcptest/npm (@modelcontextprotocol/server-everything and
# server-filesystem, pinned in its package-lock.json). Installs them when it
# can; otherwise says what is missing in one sentence.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=internal/harness/mcptest/npm
if [ -d "$dir/node_modules/@modelcontextprotocol/server-everything" ] && [ -d "$dir/node_modules/@modelcontextprotocol/server-filesystem" ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || {
  echo "Node.js and npm are missing for the MCP tests: install them with 'sudo apt-get install nodejs npm'." >&2
  exit 1
}
echo "installing the reference MCP servers for the tests (npm ci in $dir)…" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || {
  echo "The reference MCP servers could not be installed: run 'npm ci' in $dir with access to the npm registry." >&2
  exit 1
}
