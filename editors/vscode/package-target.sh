#!/bin/sh
# Packages the extension for one platform, with the amplidex binary
# inside: the .vsix that `code --install-extension` installs on that
# platform alone, whose extension finds the binary in its bin/ when
# neither the amplidex.path setting nor PATH names one.
#
#   package-target.sh GOOS GOARCH BINARY VERSION OUTDIR
#
# GOOS and GOARCH are the binary's (linux, darwin or windows; amd64 or
# arm64), mapped to VS Code's target (linux-x64, darwin-arm64,
# win32-x64, ...); VERSION is the extension's (x.y.z; empty keeps
# package.json's); the .vsix is OUTDIR/amplidex-TARGET-VERSION.vsix.
#
# The release runs it after each build (.goreleaser.yaml), and
# TestVSIXPackage (cmd/amplidex) runs it on a binary it built. It needs
# node and the extension's node_modules (`npm ci` in editors/vscode) and
# fetches nothing; it bundles src/extension.ts first when out/extension.js
# is missing. It packages in a directory of its own, so that several run
# at once. AMPLIDEX_RELEASE_NO_VSIX=1 makes it do nothing.
set -eu

if [ -n "${AMPLIDEX_RELEASE_NO_VSIX:-}" ]; then
	exit 0
fi
if [ $# -ne 5 ]; then
	echo "usage: package-target.sh GOOS GOARCH BINARY VERSION OUTDIR" >&2
	exit 2
fi
goos=$1 goarch=$2 binary=$3 version=$4 outdir=$5
say() { echo "package-target.sh: $*" >&2; }

case "$goos" in
linux | darwin) platform=$goos exe=amplidex ;;
windows) platform=win32 exe=amplidex.exe ;;
*) say "no VS Code target for GOOS $goos" && exit 1 ;;
esac
case "$goarch" in
amd64) arch=x64 ;;
arm64) arch=arm64 ;;
*) say "no VS Code target for GOARCH $goarch" && exit 1 ;;
esac
target=$platform-$arch

here=$(cd "$(dirname "$0")" && pwd)
vsce=$here/node_modules/.bin/vsce
[ -x "$vsce" ] || { say "no $vsce: run npm ci in $here" && exit 1; }
command -v node >/dev/null 2>&1 || { say "no node on PATH" && exit 1; }
[ -f "$binary" ] || { say "no binary $binary" && exit 1; }
if [ ! -f "$here/out/extension.js" ]; then
	(cd "$here" && npm run --silent build) >&2
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

stage=$(mktemp -d "${TMPDIR:-/tmp}/amplidex-vsix.XXXXXX")
trap 'rm -rf "$stage"' EXIT INT TERM
mkdir -p "$stage/out" "$stage/bin"
cp "$here/package.json" "$here/README.md" "$stage/"
cp "$here/out/extension.js" "$stage/out/"
cp "$binary" "$stage/bin/$exe"
chmod 755 "$stage/bin/$exe"
{
	cat "$here/.vscodeignore"
	echo "!bin/$exe"
} >"$stage/.vscodeignore"
# The staged manifest has the version asked for, and no prepublish step:
# what it would build is here already.
(cd "$stage" && VERSION="$version" node -e '
const fs = require("fs");
const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
if (process.env.VERSION) p.version = process.env.VERSION;
delete p.scripts["vscode:prepublish"];
fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");
')
version=$(cd "$stage" && node -p 'require("./package.json").version')
out=$outdir/amplidex-$target-$version.vsix
(cd "$stage" && "$vsce" package --target "$target" --no-dependencies --skip-license --out "$out") >&2
say "wrote $out"
