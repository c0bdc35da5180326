#!/bin/sh
# Installs gds from a release: picks the archive for this machine, downloads it and SHA256SUMS from the
# release's address, refuses it unless its sha256 is the one SHA256SUMS lists, and puts gds (and its
# completions) under a prefix.
#
#   sh install.sh --base-url URL [--prefix DIR] [--version V]
#   GDS_RELEASE_URL=URL sh install.sh
#
# URL is the folder holding the release's files (gds-<version>-<os>-<arch>.tar.gz, SHA256SUMS). The prefix
# defaults to ~/.local (gds in ~/.local/bin); /usr/local needs root. Nothing is left behind on a failure.
set -eu

base_url="${GDS_RELEASE_URL:-}"
prefix="${GDS_PREFIX:-$HOME/.local}"
version=""

fail() {
  printf 'install.sh: %s\n' "$1" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a value"; base_url="$2"; shift 2 ;;
    --base-url=*) base_url="${1#*=}"; shift ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a value"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --version) [ $# -ge 2 ] || fail "--version needs a value"; version="$2"; shift 2 ;;
    --version=*) version="${1#*=}"; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$base_url" ] || fail "give the release's address: --base-url URL (or GDS_RELEASE_URL)"
base_url="${base_url%/}"

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "no gds executable for $(uname -s); install the npm package instead (its .tgz from the release or npm pack in a clone: npm install -g ./gds-<version>.tgz)" ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) fail "no gds executable for $(uname -m); install the npm package instead (its .tgz from the release or npm pack in a clone: npm install -g ./gds-<version>.tgz)" ;;
esac

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --proto '=http,https' -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -O "$2" "$1"; }
else
  fail "neither curl nor wget is installed"
fi
if command -v sha256sum >/dev/null 2>&1; then
  digest() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  digest() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  fail "neither sha256sum nor shasum is installed: the download cannot be checked"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

fetch "$base_url/SHA256SUMS" "$work/SHA256SUMS" || fail "could not download $base_url/SHA256SUMS"
if [ -z "$version" ]; then
  version=$(sed -n "s/^[0-9a-f]\{64\}  gds-\([0-9][0-9A-Za-z.+-]*\)-$os-$arch\.tar\.gz\$/\1/p" "$work/SHA256SUMS" | head -n 1)
  [ -n "$version" ] || fail "SHA256SUMS at $base_url lists no gds for $os-$arch"
fi
archive="gds-$version-$os-$arch.tar.gz"
expected=$(awk -v f="$archive" '$2 == f { print $1 }' "$work/SHA256SUMS")
[ -n "$expected" ] || fail "SHA256SUMS lists no $archive"
fetch "$base_url/$archive" "$work/$archive" || fail "could not download $base_url/$archive"
actual=$(digest "$work/$archive")
[ "$actual" = "$expected" ] || fail "$archive has sha256 $actual, not the $expected SHA256SUMS lists: refused, nothing installed"

tar -xzf "$work/$archive" -C "$work"
folder="$work/gds-$version-$os-$arch"
[ -x "$folder/gds" ] || fail "$archive holds no gds executable"
mkdir -p "$prefix/bin" "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
# Into place by rename, so a running gds is never overwritten in the middle.
cp "$folder/gds" "$prefix/bin/.gds.new" && chmod 755 "$prefix/bin/.gds.new" && mv -f "$prefix/bin/.gds.new" "$prefix/bin/gds"
cp "$folder/completions/gds.bash" "$prefix/share/bash-completion/completions/gds"
cp "$folder/completions/_gds" "$prefix/share/zsh/site-functions/_gds"
cp "$folder/completions/gds.fish" "$prefix/share/fish/vendor_completions.d/gds.fish"
printf 'Installed gds %s into %s/bin/gds (sha256 %s checked).\n' "$version" "$prefix" "$actual"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) printf 'Add %s/bin to your PATH to run gds.\n' "$prefix" ;;
esac
