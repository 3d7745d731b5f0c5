#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""iwarp_interop_peer.py - a Linux-socket iWARP peer for interop tests.

Speaks MPA (RFC 5044, enhanced setup RFC 6581) as the initiator over a
plain TCP socket: Request with private data and IRD/ORD, checks the Reply,
sends the negotiated RTR, then exchanges FPDUs with CRC32c:
  - RDMA Write of a pattern into the engine's advertised window
    (tagged, several FPDUs, each <= MSS),
  - RDMA Read Request for 8 KB of it; checks the Read Response data,
  - Send "done <fnv32>"; expects Send "ok <fnv32>" and a 5000-byte Send
    with a known pattern, reassembled from untagged FPDUs (MSN/MO checked).
Bounded in time (socket timeouts) and count. Exit 0 on success.
usage: iwarp_interop_peer.py HOST PORT [BYTES]
"""
import re, socket, struct, sys

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (POLY if c & 1 else 0)
    TABLE.append(c)

def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

def fnv(d):
    h = 2166136261
    for b in d:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h

def fpdu(ulpdu):
    n = 2 + len(ulpdu)
    pad = (4 - n % 4) % 4
    body = struct.pack(">H", len(ulpdu)) + ulpdu + b"\0" * pad
    return body + struct.pack("<I", crc32c(body))   # CRC LSB first

def tagged(op, stag, to, payload, last=True):
    return bytes([0x80 | (0x40 if last else 0) | 1, 0x40 | op]) + \
        struct.pack(">IQ", stag, to) + payload

def untagged(op, qn, msn, mo, payload, last=True, rsvd=0):
    return bytes([(0x40 if last else 0) | 1, 0x40 | op]) + \
        struct.pack(">IIII", rsvd, qn, msn, mo) + payload

class Conn:
    def __init__(self, s):
        self.s, self.buf = s, b""
    def need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise RuntimeError("connection closed")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out
    def read_fpdu(self):
        (ul,) = struct.unpack(">H", self.need(2))
        n = 2 + ul
        pad = (4 - n % 4) % 4
        rest = self.need(ul + pad + 4)
        body = struct.pack(">H", ul) + rest[:ul + pad]
        (crc,) = struct.unpack("<I", rest[ul + pad:])
        if crc != crc32c(body):
            raise RuntimeError("bad CRC32c from engine")
        return rest[:ul]

def main():
    host, port = sys.argv[1], int(sys.argv[2])
    nbytes = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    s = socket.create_connection((host, port), timeout=20)
    s.settimeout(20)
    mss = 1460 - 12
    # MPA Request, rev 2 with C and H (RFC 6581: H announces the IRD/ORD
    # words): IRD 4 | P2P | Send0 RTR, ORD 4 | Write0 RTR
    pd = struct.pack(">HH", 0x8000 | 0x4000 | 4, 0x8000 | 4) + b"linux-peer"
    s.sendall(b"MPA ID Req Frame" + bytes([0x40 | 0x10, 2]) + struct.pack(">H", len(pd)) + pd)
    c = Conn(s)
    hdr = c.need(20)
    assert hdr[:16] == b"MPA ID Rep Frame", hdr[:16]
    flags, rev = hdr[16], hdr[17]
    (pdl,) = struct.unpack(">H", hdr[18:20])
    rep = c.need(pdl)
    assert not flags & 0x20, "rejected"
    assert not flags & 0x80, "markers requested"
    assert rev == 2
    assert flags & 0x10, "Reply without the H flag: no IRD/ORD words"
    ird, ord_ = struct.unpack(">HH", rep[:4])
    print(f"peer: MPA Reply rev {rev} flags {flags:#x} IRD {ird & 0x3fff} ORD {ord_ & 0x3fff} "
          f"p2p {bool(ird & 0x8000)} send0 {bool(ird & 0x4000)} write0 {bool(ord_ & 0x8000)} "
          f"pdata {rep[4:]!r}")
    m = re.search(rb"stag=([0-9a-f]+) addr=([0-9a-f]+) len=(\d+)", rep[4:])
    stag, addr, wlen = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
    assert ird & 0x8000, "no P2P echo"
    # RTR as negotiated
    if ord_ & 0x8000:
        s.sendall(fpdu(tagged(0, 0x100, 0, b"")))
    elif ird & 0x4000:
        s.sendall(fpdu(untagged(3, 0, 1, 0, b"")))
    else:
        raise RuntimeError("no RTR type negotiated")
    send_msn = 2 if (ird & 0x4000 and not ord_ & 0x8000) else 1
    # RDMA Write of a pattern into the window, FPDUs <= MSS
    nbytes = min(nbytes, wlen)
    data = bytes((i * 13 + 5) & 0xFF for i in range(nbytes))
    maxpl = mss - 6 - 14
    out = []
    for off in range(0, nbytes, maxpl):
        chunk = data[off:off + maxpl]
        out.append(fpdu(tagged(0, stag, addr + off, chunk, off + len(chunk) == nbytes)))
    s.sendall(b"".join(out))
    # RDMA Read Request: 8 KB from the window into our pretend sink 0x5000
    rd = 8192
    s.sendall(fpdu(untagged(1, 1, 1, 0, struct.pack(">IQIIQ", 0x777, 0x5000, rd, stag, addr + 1000))))
    got = b""
    while len(got) < rd:
        u = c.read_fpdu()
        assert u[0] & 0x80 and (u[1] & 0xF) == 2, f"expected Read Response, got {u[:2].hex()}"
        sstag, sto = struct.unpack(">IQ", u[2:14])
        assert sstag == 0x777 and sto == 0x5000 + len(got)
        got += u[14:]
        if u[0] & 0x40:
            break
    assert got == data[1000:1000 + rd], "Read Response data mismatch"
    print(f"peer: RDMA READ {rd} B back: MATCH")
    # Send "done <fnv>" of the whole window (zeros beyond our data)
    window = data + b"\0" * (wlen - nbytes)
    msg = b"done %08x" % fnv(window)
    s.sendall(fpdu(untagged(3, 0, send_msn, 0, msg)))
    # Expect two Sends: "ok <fnv>" and 5000 patterned bytes
    msgs, cur, exp_msn = [], b"", 1
    while len(msgs) < 2:
        u = c.read_fpdu()
        assert not u[0] & 0x80 and (u[1] & 0xF) in (3, 5), f"unexpected {u[:2].hex()}"
        _, qn, msn, mo = struct.unpack(">IIII", u[2:18])
        assert qn == 0 and msn == exp_msn and mo == len(cur), (qn, msn, mo)
        cur += u[18:]
        if u[0] & 0x40:
            msgs.append(cur)
            cur, exp_msn = b"", exp_msn + 1
    print(f"peer: engine said {msgs[0]!r}, then {len(msgs[1])} B")
    assert msgs[0] == b"ok %08x" % fnv(window), "engine checksum mismatch"
    assert msgs[1] == bytes((k * 7 + 3) & 0xFF for k in range(5000)), "5000 B Send mismatch"
    s.shutdown(socket.SHUT_WR)
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()
    print("peer: PASS")

if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # bounded failure with a clear message
        print(f"peer: FAIL: {e}")
        sys.exit(1)
