#!/usr/bin/env bash
# Makes sure the wire-protocol tests can run: Node.js and the npm packages of
# api/protocols (the AI SDK's `ai` and `@ai-sdk/react` with React and esbuild for a useChat page, AG-UI's `@ag-ui/client`), installed with npm ci from its lockfile.
# Installs them when it can; otherwise says what is missing in one sentence.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d api/protocols/node_modules/ai ] && [ -d api/protocols/node_modules/@ag-ui/client ] && [ -d api/protocols/node_modules/@ai-sdk/react ] && [ -x api/protocols/node_modules/.bin/esbuild ] && exit 0
command -v npm >/dev/null 2>&1 || {
  echo "npm is missing for the wire-protocol tests: install Node.js and npm with 'sudo apt-get install nodejs npm'." >&2
  exit 1
}
echo "installing the wire-protocol tests' npm packages (npm ci in api/protocols)…" >&2
(cd api/protocols && npm ci --no-audit --no-fund --loglevel=error) || {
  echo "The wire-protocol tests' npm packages could not be installed: run 'npm ci' in api/protocols with access to the npm registry." >&2
  exit 1
}
