#!/usr/bin/env python3
# Writes the seed fuzz/seeds/fuzz_dataplane/class_rings for fuzz_dataplane
# (python3 tools/fuzz_dataplane_seed.py > fuzz/seeds/fuzz_dataplane/class_rings):
# without it the fuzzer did not reach a paused class in 36 min (vsw_frame_tc
# uncovered); with it, it does at once. The seed: for fuzz_dataplane (2.5): VF 0 (fn 1) posts 30 bulk frames of 9000
# bytes on TX ring 0 (its part of class 0 fills: paused) and an EF frame on
# TX ring 5; then the clock and the uplink timer advance.
import struct, sys
ops = []
def reg(fn, off, val): ops.append(bytes([0, fn, off // 4, 0]) + struct.pack('<I', val))
def poke(addr, b4): ops.append(bytes([1, addr & 0xff, (addr >> 8) & 0xff, addr >> 16]) + b4)
def frame(addr, tos):
    hdr = bytes([2,0,0,9,9,9, 2,0,0,1,0,1, 8,0, 0x45,tos,0,0])
    for i in range(0, len(hdr), 4): poke(addr + i, hdr[i:i+4].ljust(4, b'\0'))
def desc(ring, i, addr, ln):
    poke(ring + 16*i, struct.pack('<I', addr))
    poke(ring + 16*i + 8, struct.pack('<HBB', ln, 1, 0))
R0, R5, BULK, EF = 0x1000, 0x2000, 0x4000, 0x8000
frame(BULK, 0); frame(EF, 46 << 2)
for i in range(30): desc(R0, i, BULK, 9000)
desc(R5, 0, EF, 100); desc(R5, 1, EF, 100)
TXQ5 = 0x100 + 0x20 * 4
for base, ring in ((0x00, R0), (TXQ5, R5)):
    reg(1, base + 0x00, ring); reg(1, base + 0x08, 64); reg(1, base + 0x14, 1)
reg(1, 0x10, 30)            # ring 0 TAIL: the bulk
reg(1, TXQ5 + 0x10, 2)      # ring 5 TAIL: EF
for _ in range(4): ops.append(bytes([7, 1, 0, 0]) + struct.pack('<I', 2000000))
reg(1, 0x10, 31 % 64)
sys.stdout.buffer.write(b''.join(ops))
