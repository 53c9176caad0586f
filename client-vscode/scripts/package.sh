#!/usr/bin/env bash
# Builds tfperf-<version>-<platform>-py<XY>.vsix: the bundled extension, a copy of the repository's
# server/ launcher, a tfperf wheel (what the "Install tfperf" button pip-installs) and bundled/libs:
# tfperf and its runtime dependencies, `pip install --target`ed, for tfperf.importStrategy
# "useBundled" (the extension runs the server with PYTHONPATH=bundled/libs; nothing is installed
# into the user's environment). Usage: npm run package
# PYTHON=... picks the Python that builds the wheel and the bundle (default: the repo's .venv, else
# python3). libcst, numpy and rpds-py are binary wheels, so the bundle fits this machine's platform
# and this Python's minor version only: both go into bundled/bundle.json (the extension checks them)
# and the file name, and the .vsix is marked with `vsce package --target <platform>`.
# PIP_INDEX_URL / PIP_FIND_LINKS etc. reach pip as usual.
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
wheel=$(ls bundled/tfperf-*.whl)

# bundled/libs: the wheel and its pinned dependencies, binary wheels only (no compiler at package time).
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-compile --only-binary=:all: \
  --target bundled/libs "$wheel"
rm -rf bundled/libs/bin   # console scripts with this machine's interpreter path in their #! line
# numpy (60 MB) is used by the benchmark worker only, which runs in the user's TensorFlow
# environment (it has numpy) and gets tfperf_lsp alone on its path, never bundled/libs.
rm -rf bundled/libs/numpy bundled/libs/numpy.libs bundled/libs/numpy-*.dist-info
find bundled/libs -name __pycache__ -type d -prune -exec rm -rf {} +
test -f bundled/libs/tfperf_lsp/__init__.py
pyver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
target=$(node -p 'process.platform + "-" + process.arch')   # VS Code's target names: linux-x64, darwin-arm64, win32-x64...
version=$(node -p "require('./package.json').version")
printf '{"python": "%s", "platform": "%s", "tfperf": "%s"}\n' "$pyver" "$target" "$version" > bundled/bundle.json
# The bundle must import with this Python, from bundled/libs: the server and libcst's binary parser.
"$PYTHON" -I -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import tfperf_lsp.lsp.server, libcst.native, libcst, pygls
assert all(m.__file__.startswith(sys.argv[1]) for m in (tfperf_lsp, libcst, pygls)), "not imported from the bundle"' "$HERE/bundled/libs"

out="tfperf-$version-$target-py${pyver/./}.vsix"
rm -f tfperf-*.vsix
# vsce takes minutes over bundled/libs' ~6,500 files (.vscodeignore leaves them out); a zip append, seconds.
npx vsce package --no-dependencies --skip-license --allow-missing-repository --target "$target" -o "$out"
"$PYTHON" "$HERE/scripts/vsix_add_dir.py" "$out" bundled/libs extension/bundled/libs
echo "  vsix: $out ($(du -k "$out" | cut -f1) KB, bundle for Python $pyver on $target:" \
  "$(ls bundled/libs | grep -c '\.dist-info$') distributions in bundled/libs)"
