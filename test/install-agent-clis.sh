#!/usr/bin/env bash
# Installs the real vendor agent CLIs the contract tests drive against scripted model servers on
# loopback (never a real model): Claude Code and Codex, pinned, from the npm registry, into a cache
# outside the tracked tree. They ship native binaries inside their npm packages. Idempotent.
# Writes $CACHE/agents/paths.json: {"claude": "...", "codex": "..."}.
set -euo pipefail

CACHE="${RENNET_TEST_CACHE:-$HOME/.cache/rennet-test}"
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.197}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
DIR="$CACHE/agents-claude-$CLAUDE_CODE_VERSION-codex-$CODEX_VERSION"
mkdir -p "$DIR"

if [ ! -f "$DIR/.rennet-install-ok" ]; then
  echo "[install] @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $DIR"
  cat > "$DIR/package.json" <<JSON
{ "name": "rennet-agent-clis", "private": true,
  "allowScripts": { "@anthropic-ai/claude-code": true, "@openai/codex": true } }
JSON
  npm install --no-audit --no-fund --prefix "$DIR" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >"$DIR/install.log" 2>&1 \
    || { tail -40 "$DIR/install.log"; exit 1; }
  "$DIR/node_modules/.bin/claude" --version >/dev/null
  "$DIR/node_modules/.bin/codex" --version >/dev/null
  touch "$DIR/.rennet-install-ok"
fi

mkdir -p "$CACHE/agents"
cat > "$CACHE/agents/paths.json" <<JSON
{"claude": "$DIR/node_modules/.bin/claude", "codex": "$DIR/node_modules/.bin/codex"}
JSON
echo "[install] agent CLIs ready: $CACHE/agents/paths.json"
