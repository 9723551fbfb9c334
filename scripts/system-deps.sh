#!/usr/bin/env bash
# System packages: bubblewrap gives the sandbox its strongest isolation on Linux; Debian's chromium is the browser the
# viewer's tests drive (tests/viewer). Installed when we can (root + apt-get); otherwise the sandbox falls back and says
# so in every run record, and the browser tests skip saying what is missing.
set -u
want=()
command -v bwrap >/dev/null 2>&1 || want+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || want+=(chromium)
if [ ${#want[@]} -eq 0 ]; then exit 0; fi
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    (apt-get update -qq && apt-get install -y -qq "${want[@]}") >/dev/null 2>&1 \
      || echo "note: could not install ${want[*]}; the sandbox may use a weaker isolation, browser tests skip"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    (sudo apt-get update -qq && sudo apt-get install -y -qq "${want[@]}") >/dev/null 2>&1 \
      || echo "note: could not install ${want[*]}; the sandbox may use a weaker isolation, browser tests skip"
  else
    echo "note: apt-get install ${want[*]} for the strongest sandbox isolation and the viewer's browser tests"
  fi
fi
exit 0
