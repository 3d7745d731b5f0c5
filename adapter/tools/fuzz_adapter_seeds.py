#!/usr/bin/env python3
# Writes the seeds of fuzz_adapter (python3 tools/fuzz_adapter_seeds.py
# fuzz/seeds/fuzz_adapter): issue 33's hostile callbacks at the points that
# matter, which random inputs did not reach in 48k runs (5 min). Against
# the code before the entry guard, every seed failed: heap-use-after-free
# in rnic_cmd_run/cmd_pd (a reset in a command's completion), DMA as a
# function being reset (a reset in an RX ring's DMA, in a TX ring's walk)
# and another function's TX nested in a DMA (a TAIL write in an RX DMA).
# The op format is fuzz/fuzz_adapter.c's; addresses are offsets into its
# guest memory (MEM_BASE 0x100000, a 64 KiB block per function).
import os, struct, sys

MEM_BASE = 0x100000
def op(*b): return bytes(list(b) + [0] * (8 - len(b)))
def poke(off, b4): return op(1, off & 0xff, (off >> 8) & 0xff, off >> 16, *b4)
def arm(action, countdown, *args): return op(6, action, countdown, *args)
def bar(fn, window, reg, val): return op(0, fn, window << 6 | reg // 4, 0, *struct.pack('<I', val))
def frame(off, dst, src):
    b = bytes(dst) + bytes(src) + b'\x88\xb5\0\0'
    return b''.join(poke(off + i, b[i:i + 4]) for i in range(0, 16, 4))
def txd(blk):
    return (poke(blk + 0x3000, struct.pack('<I', MEM_BASE + blk + 0x4000)) +
            poke(blk + 0x3008, bytes([64, 0, 1, 0])))    # 64 bytes, EOP

BCAST, PF = [0xff] * 6, [0x52, 0x54, 0, 0, 0, 1]
seeds = {
    # a broadcast from the wire; the callback in VF 0's RX DMA resets VF 0,
    # the PF, or disables the VFs
    'wire_vf_reset': frame(0x100, BCAST, [2, 0, 0, 0, 0, 9]) + arm(1, 4, 0) + op(2, 8, 0x00, 0x01),
    'wire_pf_reset': frame(0x100, BCAST, [2, 0, 0, 0, 0, 9]) + arm(2, 5, 0) + op(2, 8, 0x00, 0x01),
    'wire_vf_disable': frame(0x100, BCAST, [2, 0, 0, 0, 0, 9]) + arm(3, 4, 0) + op(2, 8, 0x00, 0x01),
    # PD_ALLOC in VF 0's command ring (slot 2); the reset lands in its run
    'rcmd_vf_reset': poke(0x10000 + 2 * 128, struct.pack('<HH', 0x10, 0)) + arm(1, 1, 0) + bar(1, 1, 0x50, 3),
    'rcmd_pf_reset': poke(0x10000 + 2 * 128, struct.pack('<HH', 0x10, 0)) + arm(2, 0, 0) + bar(1, 1, 0x50, 3),
    # the PF's TX broadcast: a VF reset inside its walk, and (class 6) VF 0's
    # RX DMA writing VF 1's TAIL with a frame of VF 1's posted
    'tx_vf_reset': txd(0) + frame(0x4000, BCAST, PF) + arm(1, 3, 0) + bar(0, 0, 0x10, 1),
    'tx_tail_nested': (txd(0) + frame(0x4000, BCAST, PF) + txd(0x20000) +
                       frame(0x24000, [0x52, 0x54, 0, 0, 0, 0x99], [2, 0, 0, 0, 1, 1]) +
                       arm(4, 4, 2, 0, 1) + bar(0, 0, 0x10, 1)),
}
out = sys.argv[1] if len(sys.argv) > 1 else 'fuzz/seeds/fuzz_adapter'
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
