#!/usr/bin/env bash
# Entry point for the repository's test command.
#   scripts/test.sh            npm ci, compile, unit tests (plain Node, ~1 s of tests)
#   scripts/test.sh --e2e      ... then the end-to-end test in code-server (several minutes;
#                              installs code-server + Chromium on first use), extra args go to e2e/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run compile
npm test
if [ "${1:-}" = "--e2e" ]; then
  shift
  npm run e2e -- "$@"
fi
