#!/usr/bin/env bash
# End-to-end test in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) + headless Chromium.
#
#   npm run e2e                 # against the real server (python server/tfperf_server.py)
#   npm run e2e -- --fake       # against e2e/fake_server.py (client-side contract only)
#   npm run e2e -- --no-restricted   # skip the Restricted Mode run
#   npm run e2e -- --bundled-only    # only the tfperf.importStrategy "useBundled" run (fast)
#
# It builds the .vsix (npm run package), creates a fresh venv that sees the repo venv's packages
# (TensorFlow, pygls...) but not tfperf, installs the .vsix and a test-only probe extension into a
# throw-away code-server profile, and then:
#   trusted run:    clicks "Install tfperf", checks squiggles, hovers, a quick fix, a benchmark with
#                   its progress notification and timings in the hover; "tfperf: Observe: Run This
#                   File" (command palette) on a program that retraces: the observed fact on the
#                   call line (diagnostic, hover, inlay hint); screenshots.
#   restricted run: answers "No" to the trust prompt; hints still work, benchmarks are refused
#                   with an explanation.
#   (both with tfperf.importStrategy "fromEnvironment", the interpreter's own tfperf)
#   bundled run:    tfperf.importStrategy "useBundled" (the default) with a bare venv (no packages at
#                   all): diagnostics from the .vsix's bundled server, nothing installed; then fix on
#                   save (editor.codeActionsOnSave source.fixAll.tfperf, Ctrl+S in the page).
# Screenshots, summaries and logs go to e2e/artifacts/. Every process it starts is stopped at exit.
# Env: CODE_SERVER_DIR (default /tmp/code-server), TFPERF_E2E_PYTHON (default <repo>/.venv/bin/python),
#      TFPERF_E2E_BENCH_TIMEOUT (seconds, default 300), TFPERF_E2E_NO_BUILD=1 (reuse the .vsix),
#      TFPERF_E2E_OLD_PYTHON (a Python < 3.10 for the "too old" message; default: pyenv's 3.9 if present).
set -euo pipefail
E2E=$(cd "$(dirname "$0")" && pwd)
CLIENT=$(cd "$E2E/.." && pwd)
REPO=$(cd "$CLIENT/.." && pwd)
SERVER=real RESTRICTED=1 MAIN=1 BUNDLED=1
for arg in "$@"; do
  case "$arg" in
    --fake) SERVER=fake BUNDLED=0 ;;
    --no-restricted) RESTRICTED=0 ;;
    --bundled-only) MAIN=0 RESTRICTED=0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
CS_DIR=${CODE_SERVER_DIR:-/tmp/code-server}
# A Python older than 3.10 for the "Python too old" message (skipped when there is none).
OLD_PY=${TFPERF_E2E_OLD_PYTHON:-$(ls /root/.pyenv/versions/3.9.*/bin/python /usr/bin/python3.9 /usr/bin/python3.8 2>/dev/null | head -1 || true)}
BASE_PY=${TFPERF_E2E_PYTHON:-$REPO/.venv/bin/python}
ART=$E2E/artifacts
T=$(mktemp -d /tmp/tfperf-e2e.XXXXXX)
started=$(date +%s)
CS_PID=""

DRIVER_PID=""
CLEANED=0
cleanup() {
  local rc=$?
  [ "$CLEANED" = 1 ] && return
  CLEANED=1
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null
  stop_code_server
  # Anything still running that we started carries our marker in its environment (the language
  # server and benchmark workers are grandchildren of code-server; Chromium is the driver's child).
  local left=""
  for p in /proc/[0-9]*; do
    if { tr '\0' '\n' < "$p/environ"; } 2>/dev/null | grep -qx "TFPERF_E2E_RUN=$T"; then left="$left ${p#/proc/}"; fi
  done
  [ -f "$T/xch/chromium.pid" ] && left="$left $(cat "$T/xch/chromium.pid")"
  for pid in $left; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$T"
  echo "e2e finished in $(( $(date +%s) - started )) s (exit $rc)"
  exit $rc
}
trap cleanup EXIT INT TERM

stop_code_server() {
  if [ -n "$CS_PID" ]; then
    kill -TERM -- "-$CS_PID" 2>/dev/null || true   # its whole process group: ext host, language server, workers
    for _ in $(seq 1 20); do kill -0 -- "-$CS_PID" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$CS_PID" 2>/dev/null || true
    CS_PID=""
  fi
}

log() { echo "[e2e $(( $(date +%s) - started ))s] $*"; }

# 1. Tools: code-server, Chromium, puppeteer-core (the recipe is idempotent).
if [ ! -x "$CS_DIR/node_modules/.bin/code-server" ]; then
  log "installing code-server into $CS_DIR"
  bash "$E2E/install-code-server.sh" "$CS_DIR"
fi
CS="$CS_DIR/node_modules/.bin/code-server"

# 2. The .vsix under test, and the probe extension.
cd "$CLIENT"
if [ "${TFPERF_E2E_NO_BUILD:-0}" != 1 ] || ! ls tfperf-*.vsix >/dev/null 2>&1; then
  log "building the .vsix"
  npm run --silent package >"$T/package.log" 2>&1 || { cat "$T/package.log"; exit 1; }
fi
VSIX=$(ls -t "$CLIENT"/tfperf-*.vsix | head -1)
(cd "$E2E/probe" && npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository -o "$T/probe.vsix" >/dev/null)

# 3. A fresh environment without tfperf that sees the repo venv's packages through a .pth file,
#    so "Install tfperf" can pip-install the bundled wheel offline and without touching .venv.
#    The shared packages are linked one by one, leaving out any tfperf install (e.g. an editable one).
"$("$BASE_PY" -c 'import sys; print(sys._base_executable)')" -m venv "$T/venv"
SHARED_SITE=$("$BASE_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$T/shared-site"
for entry in "$SHARED_SITE"/*; do
  case "$(basename "$entry")" in tfperf*|__editable__*|*.pth|_distutils_hack|distutils-precedence.pth) continue ;; esac
  ln -s "$entry" "$T/shared-site/"
done
echo "$T/shared-site" > "$("$T/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/e2e-shared.pth"
if [ "$SERVER" = fake ]; then
  INTERPRETER="$E2E/fake-python"
  export TFPERF_FAKE_PYTHON="$T/venv/bin/python"
  SRC="$E2E/fixtures/fake"
else
  INTERPRETER="$T/venv/bin/python"
  SRC="$REPO/examples"
fi
mkdir -p "$T/ud/User" "$T/ext" "$T/xch" "$ART"
# The bundled run's interpreter: a venv with nothing installed (not even the shared packages).
"$("$BASE_PY" -c 'import sys; print(sys._base_executable)')" -m venv --without-pip "$T/bare"
BARE_SITE=$("$T/bare/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$ART"/*.png "$ART"/summary-*.json "$ART"/*.log
# User settings of a run: write_settings INTERPRETER IMPORT_STRATEGY. The probe's notebook and
# fix-on-save checks use TFP106's rename, an opt-in rule: the user settings turn it on.
write_settings() {
  cat > "$T/ud/User/settings.json" <<JSON
  {
    "tfperf.interpreter": "$1",
    "tfperf.importStrategy": "$2",
    "tfperf.benchmark.timeBudget": 1,
    "tfperf.rules": { "TFP106": "warning" },
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "editor.hover.delay": 300,
    "editor.minimap.enabled": false,
    "files.hotExit": "off",
    "chat.commandCenter.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "security.workspace.trust.startupPrompt": "always",
    "security.workspace.trust.untrustedFiles": "open",
    "[python]": { "editor.codeActionsOnSave": { "source.fixAll.tfperf": "explicit" } }
  }
JSON
}
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$T/config.yaml"
CS_ARGS=(--config "$T/config.yaml" --user-data-dir "$T/ud" --extensions-dir "$T/ext")
# code-server, Chromium and the language server write caches and logs under the XDG folders
# (~/.local/share/code-server, ~/.config/chromium, ~/.cache/jedi ...): keep them in $T.
export XDG_CONFIG_HOME="$T/xdg/config" XDG_CACHE_HOME="$T/xdg/cache" XDG_DATA_HOME="$T/xdg/data"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_DATA_HOME"
log "installing $(basename "$VSIX") ($(du -k "$VSIX" | cut -f1) KB) and the probe"
"$CS" "${CS_ARGS[@]}" --force --install-extension "$VSIX" >"$T/install.log" 2>&1 || { cat "$T/install.log"; exit 1; }
"$CS" "${CS_ARGS[@]}" --force --install-extension "$T/probe.vsix" >>"$T/install.log" 2>&1 || { cat "$T/install.log"; exit 1; }

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

# 4. One code-server session per mode.
run_mode() {
  local mode=$1 trust_flag=() port
  [ "$mode" != restricted ] && trust_flag=(--disable-workspace-trust)
  if [ "$mode" = bundled ]; then write_settings "$T/bare/bin/python" useBundled; else write_settings "$INTERPRETER" fromEnvironment; fi
  port=$(free_port)
  rm -f "$T/xch"/*
  local ws="$T/ws-$mode"   # fresh files per run: the other run's edits must not leak in
  mkdir -p "$ws" && cp "$SRC"/*.py "$ws/"
  log "$mode run: code-server on port $port"
  # TFPERF_CACHE_DIR: benchmark results of this run only (not ~/.cache/tfperf), so a benchmark is really measured.
  TFPERF_E2E_OLD_PYTHON="$OLD_PY" TFPERF_E2E_RUN="$T" TFPERF_CACHE_DIR="$T/bench-cache" TFPERF_E2E_DIR="$T/xch" TFPERF_E2E_TRUSTED=$([ "$mode" = restricted ] && echo 0 || echo 1) \
    TFPERF_E2E_MODE="$mode" TFPERF_E2E_SITE_PACKAGES="$BARE_SITE" \
    TFPERF_E2E_BENCH_TIMEOUT="${TFPERF_E2E_BENCH_TIMEOUT:-300}" \
    setsid "$CS" "${CS_ARGS[@]}" --bind-addr "127.0.0.1:$port" --disable-telemetry --disable-update-check \
    "${trust_flag[@]}" "$ws" >"$T/code-server-$mode.log" 2>&1 &
  CS_PID=$!
  for _ in $(seq 1 120); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.5; done
  local rc=0
  TFPERF_E2E_RUN="$T" TFPERF_E2E_EXPECT_INSTALL=$([ "$mode" = trusted ] && echo 1 || echo 0) \
    TFPERF_E2E_BENCH_TIMEOUT="${TFPERF_E2E_BENCH_TIMEOUT:-300}" \
    node "$E2E/drive.js" "$CS_DIR/node_modules/puppeteer-core" "http://127.0.0.1:$port/?folder=$ws" "$T/xch" "$ART" "$mode" &
  DRIVER_PID=$!
  wait "$DRIVER_PID" || rc=$?   # `wait`, not a foreground child: a signal runs the cleanup trap at once
  DRIVER_PID=""
  stop_code_server
  cp "$T/code-server-$mode.log" "$ART/" 2>/dev/null || true
  # The tfperf output channel (LogOutputChannel) as VS Code wrote it.
  local latest
  latest=$(ls -td "$T/ud/logs"/*/ 2>/dev/null | head -1)
  [ -n "$latest" ] && find "$latest" -name 'tfperf.log' | head -1 | xargs -r -I{} cp {} "$ART/tfperf-output-$mode.log"
  return $rc
}

status=0
if [ "$MAIN" = 1 ]; then
  run_mode trusted || status=1
fi
if [ "$RESTRICTED" = 1 ]; then
  run_mode restricted || status=1
fi
if [ "$BUNDLED" = 1 ]; then
  run_mode bundled || status=1
fi
log "artifacts: $ART"
exit $status
