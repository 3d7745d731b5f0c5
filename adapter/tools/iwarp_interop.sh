#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interop of the iWARP engine (on the adapter's TCP, attached to a TAP in a
# private network namespace, TEST-NET-1 addresses only inside it) with a
# Linux-socket peer speaking MPA/DDP/RDMAP (tools/iwarp_interop_peer.py).
#   iwarp_interop.sh TOOL [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$1
out=${2:-$here/../build/interop-iwarp}
if [ "$(id -u)" != 0 ]; then echo "interop-iwarp: SKIP (needs root)"; exit 0; fi
if [ ! -c /dev/net/tun ]; then echo "interop-iwarp: SKIP (no /dev/net/tun)"; exit 0; fi
command -v ip >/dev/null || { echo "interop-iwarp: SKIP (no iproute2)"; exit 0; }
mkdir -p "$out"
ns=vfw-iwarp-$$
tap=vfwi0
lip=192.0.2.1     # Linux peer, inside $ns only
eip=192.0.2.2     # the engine
tp=
cleanup() { [ -n "$tp" ] && kill "$tp" 2>/dev/null; ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
nsx ip link set lo up
nsx ip tuntap add dev "$tap" mode tap
nsx ip addr add "$lip/24" dev "$tap"
nsx ip link set "$tap" up
nsx timeout 60 "$tool" --tap "$tap" --ip "$eip" --port 7174 --timeout 40 \
    --pcap "$out/iwarp-interop.pcap" > "$out/engine.log" 2>&1 & tp=$!
sleep 0.5
fails=0
nsx timeout 50 python3 "$here/iwarp_interop_peer.py" "$eip" 7174 100000 || fails=$((fails+1))
wait "$tp" || fails=$((fails+1))
tp=
cat "$out/engine.log"
if command -v tshark >/dev/null && [ -f "$out/iwarp-interop.pcap" ]; then
  bad=$(tshark -r "$out/iwarp-interop.pcap" -o tcp.check_checksum:TRUE --disable-protocol rpcordma \
        --disable-protocol smb_direct -Y '_ws.malformed || _ws.expert.severity >= 8388608' 2>/dev/null | wc -l)
  fp=$(tshark -r "$out/iwarp-interop.pcap" -Y iwarp_mpa.fpdu 2>/dev/null | wc -l)
  echo "interop-iwarp: capture $out/iwarp-interop.pcap: $fp MPA FPDUs, $bad malformed/error frames"
  [ "$bad" -eq 0 ] || fails=$((fails+1))
fi
echo "interop-iwarp: $((fails == 0 ? 1 : 0)) passed, $fails failed"
[ "$fails" -eq 0 ]
