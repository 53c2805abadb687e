#!/usr/bin/env bash
# Installs what `make images` (services/gen/images) copies into every image
# when the machine lacks it: the CA bundle (Debian's ca-certificates,
# /etc/ssl/certs/ca-certificates.crt) and the time zones (tzdata,
# /usr/share/zoneinfo). Idempotent and quiet once installed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ -s /etc/ssl/certs/ca-certificates.crt ] || "$here/apt-install.sh" ca-certificates ca-certificates
[ -d /usr/share/zoneinfo ] || "$here/apt-install.sh" tzdata tzdata
