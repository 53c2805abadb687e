#!/usr/bin/env bash
# apt-install.sh NAME PACKAGE: installs Debian's PACKAGE (no recommends)
# for the tool NAME, with sudo when not root; runs `apt-get update` only
# when the first try fails (an empty or stale package list). Used by the
# tools/*/install.sh scripts, which first check whether the tool is already
# on PATH. Messages are prefixed with NAME.
set -euo pipefail
name=$1 pkg=$2

if ! command -v apt-get >/dev/null 2>&1; then
  echo "$name: not found and no apt-get here; install $name and put it on PATH" >&2
  exit 1
fi
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "$name: installing the $pkg package needs root (or sudo)" >&2; exit 1; }
  sudo=sudo
fi

echo "$name: installing Debian's $pkg package (apt-get install --no-install-recommends $pkg)"
install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; }
if ! install; then
  $sudo apt-get update -qq
  install
fi
