#!/usr/bin/env bash
# Optional system packages: bubblewrap gives the sandbox its strongest isolation on Linux.
# Installed when we can (root + apt-get); otherwise the sandbox falls back and says so in every run record.
set -u
if command -v bwrap >/dev/null 2>&1; then exit 0; fi
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 \
      || echo "note: could not install bubblewrap; the sandbox will use a weaker isolation"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    (sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap) >/dev/null 2>&1 \
      || echo "note: could not install bubblewrap; the sandbox will use a weaker isolation"
  else
    echo "note: install bubblewrap (apt-get install bubblewrap) for the strongest sandbox isolation"
  fi
fi
exit 0
