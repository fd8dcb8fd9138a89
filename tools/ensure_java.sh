#!/usr/bin/env bash
# PySpark 4 needs Java 17+. Install it when we can (root + apt-get), else say what to do.
set -euo pipefail
need=17
major() {
  java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}' | awk -F. '{ if ($1 == "1") print $2; else print $1 }'
}
if command -v java >/dev/null 2>&1; then
  have=$(major || echo 0)
  if [ "${have:-0}" -ge "$need" ] 2>/dev/null; then
    exit 0
  fi
  echo "ensure_java: found Java ${have:-unknown}, PySpark needs Java ${need}+." >&2
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure_java: installing openjdk-17-jre-headless with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  exit 0
fi
echo "ensure_java: Java ${need}+ is required for the Spark analyses and is missing." >&2
echo "ensure_java: install it (e.g. 'sudo apt-get install openjdk-17-jre-headless') and run make again." >&2
exit 1
