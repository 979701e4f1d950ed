#!/usr/bin/env bash
# Installs Debian's Chromium for the workbench's browser test (Playwright drives it; Playwright's own
# browser download is not used) and an emoji font so screenshots show the UI's status marks.
# Idempotent and instant when both are there. Needs root for the first install.
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
[ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || need+=(fonts-noto-color-emoji)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "browser_up: root is needed to install ${need[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
echo "browser_up: $(chromium --version 2>/dev/null | head -1)"
