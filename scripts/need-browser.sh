#!/usr/bin/env bash
# Makes sure the browser tests can run: Debian's Chromium and the npm packages
# of api/web/e2e (playwright-core, which drives the installed Chromium and
# downloads no browser of its own). Installs them when it can; otherwise says
# what is missing in one sentence.
set -euo pipefail
cd "$(dirname "$0")/.."
chromium_bin() {
  for c in "${TOOLMARK_CHROMIUM:-}" chromium chromium-browser google-chrome; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }
  done
  return 1
}
if ! chromium_bin >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Chromium for the browser tests (apt-get install chromium)…" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
  fi
  chromium_bin >/dev/null || {
    echo "Chromium is missing for the browser tests: install it with 'sudo apt-get install chromium' (or set TOOLMARK_CHROMIUM to a Chromium binary)." >&2
    exit 1
  }
fi
if [ -f api/web/e2e/package.json ] && [ ! -d api/web/e2e/node_modules/playwright-core ]; then
  command -v npm >/dev/null 2>&1 || {
    echo "npm is missing for the browser tests: install Node.js and npm with 'sudo apt-get install nodejs npm'." >&2
    exit 1
  }
  echo "installing the browser tests' npm packages (npm ci in api/web/e2e)…" >&2
  (cd api/web/e2e && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) || {
    echo "The browser tests' npm packages could not be installed: run 'npm ci' in api/web/e2e with access to the npm registry." >&2
    exit 1
  }
fi
