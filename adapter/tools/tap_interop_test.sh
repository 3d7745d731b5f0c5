#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interop of the adapter's TCP stack with Linux's TCP over a TAP device in a
# private network namespace (addresses TEST-NET-1, only inside that netns).
#   tap_interop_test.sh [TOOL] [OUTDIR]
# Runs: (1) Linux client -> engine echo server, 3 connections x 2 MB,
#       (2) engine client -> Linux echo server, 2 MB,
#       (3) both again with 2 % frame loss injected both ways by the tool,
#       (4) both again with netem delay/reorder, if sch_netem exists.
# Writes one pcap per run to OUTDIR. Needs root and /dev/net/tun.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-$here/../build/tools/tap_interop}
out=${2:-$here/../build/interop}
bytes=${VFW_INTEROP_BYTES:-2000000}
if [ "$(id -u)" != 0 ]; then echo "interop-tcp: SKIP (needs root)"; exit 0; fi
if [ ! -c /dev/net/tun ]; then echo "interop-tcp: SKIP (no /dev/net/tun)"; exit 0; fi
command -v ip >/dev/null || { echo "interop-tcp: SKIP (no iproute2)"; exit 0; }
[ -x "$tool" ] || { echo "interop-tcp: $tool not built"; exit 1; }
mkdir -p "$out"
ns=vfw-tcp-$$
tap=vfwt0
lip=192.0.2.1     # Linux, inside $ns only
eip=192.0.2.2     # the engine
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
nsx ip link set lo up
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
nsx ip tuntap add dev "$tap" mode tap
nsx ip addr add "$lip/24" dev "$tap"
nsx ip link set "$tap" up
fails=0

wait_listen() { # port: until a Linux socket listens on it in $ns (10 s max)
  local i
  for i in $(seq 100); do
    nsx ss -Hltn "sport = :$1" | grep -q . && return 0
    sleep 0.1
  done
  echo "interop-tcp: nothing listens on port $1 after 10 s"
}

run_pair() { # name [extra tool args]
  local name=$1; shift
  local extra=("$@")
  echo "== interop-tcp: $name: Linux client -> engine echo server"
  nsx timeout 120 "$tool" --tap "$tap" --ip "$eip" --mode echo-server --port 17000 \
      --conns 3 --timeout 90 --pcap "$out/$name-echo.pcap" "${extra[@]}" & local tp=$!; pids+=("$tp")
  sleep 0.5
  if ! nsx timeout 100 python3 "$here/tap_interop_peer.py" client "$eip" 17000 "$bytes" 3; then
    fails=$((fails+1)); echo "interop-tcp: $name echo: peer FAILED"
  fi
  if ! wait "$tp"; then fails=$((fails+1)); echo "interop-tcp: $name echo: engine FAILED"; fi

  echo "== interop-tcp: $name: engine client -> Linux echo server"
  nsx timeout 100 python3 "$here/tap_interop_peer.py" server "$lip" 17001 "$bytes" & local pp=$!; pids+=("$pp")
  # Connect only once Linux listens: a SYN before that is answered with RST
  # and the engine (rightly) reports -ECONNREFUSED. A fixed sleep was not
  # enough on a loaded machine.
  wait_listen 17001
  if ! nsx timeout 120 "$tool" --tap "$tap" --ip "$eip" --mode client --peer "$lip" \
      --port 17001 --bytes "$bytes" --record 1000 --timeout 90 --pcap "$out/$name-client.pcap" "${extra[@]}"; then
    fails=$((fails+1)); echo "interop-tcp: $name client: engine FAILED"
  fi
  if ! wait "$pp"; then fails=$((fails+1)); echo "interop-tcp: $name client: peer FAILED"; fi
}

run_pair clean
# Loss injected by the engine's TAP attachment on both directions (2 %):
# Linux retransmits to us, we retransmit to Linux.
run_pair lossy --loss-ppm 20000
if nsx tc qdisc add dev "$tap" root netem delay 2ms reorder 10% 50% 2>/dev/null; then
  run_pair netem-reorder
  nsx tc qdisc del dev "$tap" root 2>/dev/null || true
else
  echo "interop-tcp: netem not available (no sch_netem), reorder run skipped"
fi
ls -l "$out"/*.pcap
echo "interop-tcp: $fails failures"
[ "$fails" -eq 0 ]
