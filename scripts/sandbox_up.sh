#!/usr/bin/env bash
# Installs and starts what the isolating sandbox runtimes need: Debian's bubblewrap (jail) and
# docker.io with a running engine (vfs storage, no iptables or bridge: jobs use --network none).
# Idempotent and quick when everything is already there. Needs root for the first install.
set -euo pipefail
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v dockerd >/dev/null || need+=(docker.io)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "sandbox_up: root is needed to install ${need[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then echo "sandbox_up: no Docker engine answers and starting one needs root" >&2; exit 1; fi
  nohup dockerd --storage-driver=vfs --iptables=false --bridge=none >/tmp/opforge-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "sandbox_up: dockerd did not start, see /tmp/opforge-dockerd.log" >&2; exit 1; }
fi
echo "sandbox_up: Docker engine $(docker version --format '{{.Server.Version}}'), $(bwrap --version)"
