#!/usr/bin/env bash
# Installs headless Chromium (for the pages' browser tests in `make test`)
# from Debian's `chromium` package when it is not on PATH; idempotent and
# quiet once installed. The tests find it as `chromium` (or $PACER_CHROMIUM).
set -euo pipefail

if [ -n "${PACER_CHROMIUM:-}" ]; then
  command -v "$PACER_CHROMIUM" >/dev/null 2>&1 && exit 0
fi
command -v chromium >/dev/null 2>&1 && exit 0

"$(dirname "$0")/../apt-install.sh" chromium chromium
command -v chromium >/dev/null
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
