#!/usr/bin/env bash
# Builds tfperf-<version>.vsix: the bundled extension, a copy of the repository's server/ launcher
# and a tfperf wheel (what the "Install tfperf" button pip-installs). Usage: npm run package
# PYTHON=... picks the Python that builds the wheel (default: the repo's .venv, else python3).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)   # client-vscode/
REPO=$(cd "$HERE/.." && pwd)
cd "$HERE"
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=$(command -v python3); fi
fi

npx tsc -p ./
node scripts/bundle.mjs --production

rm -rf server bundled
mkdir -p server bundled
cp "$REPO/server/tfperf_server.py" "$REPO/server/check_env.py" server/

# Build the wheel from a copy of the sources, so nothing (build/, *.egg-info) lands in the repository.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$REPO/pyproject.toml" "$stage/"
[ -f "$REPO/README.md" ] && cp "$REPO/README.md" "$stage/" || echo "tfperf" > "$stage/README.md"
[ -f "$REPO/LICENSE" ] && cp "$REPO/LICENSE" "$stage/"
tar -C "$REPO" --exclude=__pycache__ -cf - tfperf_lsp | tar -C "$stage" -xf -
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps -w bundled "$stage"
ls bundled/tfperf-*.whl >/dev/null

version=$(node -p "require('./package.json').version")
npx vsce package --no-dependencies --skip-license --allow-missing-repository -o "tfperf-$version.vsix"
npx vsce ls --no-dependencies | sed 's/^/  vsix: /'
