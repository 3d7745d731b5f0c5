#!/usr/bin/env bash
# iwarp_capture_check.sh TEST_BIN PCAP - capture a clean engine-to-engine
# run over the adapter's TCP (simwire) and check that tshark dissects it as
# iWARP (MPA, DDP, RDMAP) with no malformed packets, no expert errors, no
# bad TCP checksums and no bad MPA CRCs, and that every opcode is present.
# The RPC-over-RDMA and SMB-Direct heuristics are disabled: the test's
# payload is random bytes, which those heuristics would otherwise try (and
# fail) to parse as their protocols.
set -u
bin=$1; cap=$2
pass=0; fail=0
ok()  { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
if ! command -v tshark >/dev/null; then
  echo "capture-check: SKIP (tshark not installed; run tools/install-deps adapter)"; exit 0
fi
"$bin" --pcap "$cap" >/dev/null || bad "capture run failed"
TS=(tshark -r "$cap" -o tcp.check_checksum:TRUE --disable-protocol rpcordma
    --disable-protocol smb_direct)
n_frames=$("${TS[@]}" 2>/dev/null | wc -l)
[ "$n_frames" -gt 20 ] && ok || bad "only $n_frames frames"
errs=$("${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= 8388608 || tcp.checksum.status == 0' 2>/dev/null | wc -l)
[ "$errs" -eq 0 ] && ok || bad "$errs malformed/error/bad-checksum frames"
verbose=$("${TS[@]}" -V 2>/dev/null)
badcrc=$(grep -c 'Bad CRC32' <<<"$verbose")
goodcrc=$(grep -c 'Good CRC32' <<<"$verbose")
fpdus=$("${TS[@]}" -Y iwarp_mpa.fpdu 2>/dev/null | wc -l)
[ "$badcrc" -eq 0 ] && ok || bad "$badcrc bad MPA CRCs"
[ "$goodcrc" -ge "$fpdus" ] && [ "$fpdus" -gt 0 ] && ok || bad "good CRCs $goodcrc < FPDUs $fpdus"
for f in iwarp_mpa.req iwarp_mpa.rep iwarp_mpa.fpdu iwarp_ddp.tagged iwarp_ddp.untagged iwarp_rdma; do
  c=$("${TS[@]}" -Y "$f" 2>/dev/null | wc -l)
  [ "$c" -gt 0 ] && ok || bad "no $f"
done
for op in 0 1 2 3 4 5 6 7; do
  c=$("${TS[@]}" -Y "iwarp_rdma.opcode == $op" 2>/dev/null | wc -l)
  [ "$c" -gt 0 ] && ok || bad "no RDMAP opcode $op"
done
echo "capture: $n_frames frames, $fpdus MPA FPDUs, $goodcrc good CRC32c, $badcrc bad, $errs malformed/errors ($cap)"
echo "iwarp-capture-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
