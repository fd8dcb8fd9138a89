#!/usr/bin/env bash
# The report's browser test opens report.html in headless Chromium. Install Debian's package when we can
# (root + apt-get, and it is missing); otherwise say so: the test then skips, naming the reason.
set -euo pipefail
for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure_chromium: installing chromium (headless browser for the report test) with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  exit 0
fi
echo "ensure_chromium: chromium is missing and cannot be installed here (needs root and apt-get);" >&2
echo "ensure_chromium: the report's browser test will be skipped. Install it with 'sudo apt-get install chromium'." >&2
exit 1
