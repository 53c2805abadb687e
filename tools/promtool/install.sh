#!/usr/bin/env bash
# Installs promtool (for `make verify`'s rule checks and tests) from Debian's
# `prometheus` package when it is not on PATH; idempotent and quiet once
# installed. The package's postinst would start a Prometheus server: it is
# kept from starting (policy-rc.d), and stopped and disabled if one started
# anyway, so nothing is left running.
set -euo pipefail

command -v promtool >/dev/null 2>&1 && exit 0

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

was_running=$(pgrep -x prometheus || true)
# policy-rc.d exit 101 = "action forbidden": invoke-rc.d and
# deb-systemd-invoke then start no service. Only added if absent, and
# removed again.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  trap '$sudo rm -f "$policy"' EXIT
fi

"$(dirname "$0")/../apt-install.sh" promtool prometheus

# Belt and braces: if the package started a server after all, stop it and
# keep it from starting at boot. Only a server that was not running before.
if [ -z "$was_running" ] && pgrep -x prometheus >/dev/null; then
  echo "promtool: the package started a prometheus server; stopping and disabling it"
  if [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus.service
  else
    $sudo invoke-rc.d --force prometheus stop || $sudo /etc/init.d/prometheus stop
    $sudo update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
fi
if [ -d /run/systemd/system ]; then
  $sudo systemctl disable prometheus.service >/dev/null 2>&1 || true
fi
command -v promtool >/dev/null
echo "promtool: $(promtool --version 2>&1 | head -1)"
