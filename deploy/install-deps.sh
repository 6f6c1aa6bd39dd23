#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-deps.sh - install the Debian 12 packages tiletune builds, tests and runs with.
# Idempotent; skips apt-get when everything is already there.  Needs root (or sudo).
set -euo pipefail
pkgs=(build-essential cmake pkg-config git curl ca-certificates
      libmicrohttpd-dev libjansson-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev
      libssl-dev libcunit1-dev zlib1g-dev liblapacke-dev libopenblas-dev postgresql wrk python3
      python3-pytest chromium python3-websocket
      python3-setuptools python3-pip python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
