#!/usr/bin/env bash
# Installs headless Chromium (for the pages' browser tests in `make test`)
# from Debian's `chromium` package when it is not on PATH; idempotent and
# quiet once installed. The tests find it as `chromium` (or $PACER_CHROMIUM).
set -euo pipefail

if [ -n "${PACER_CHROMIUM:-}" ]; then
  command -v "$PACER_CHROMIUM" >/dev/null 2>&1 && exit 0
fi
command -v chromium >/dev/null 2>&1 && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: not found and no apt-get here; install Chromium and put it on PATH as chromium (or set PACER_CHROMIUM)" >&2
  exit 1
fi
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "chromium: installing the chromium package needs root (or sudo)" >&2; exit 1; }
  sudo=sudo
fi

echo "chromium: installing Debian's chromium package (apt-get install --no-install-recommends chromium)"
install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
if ! install; then
  $sudo apt-get update -qq
  install
fi
command -v chromium >/dev/null
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
