#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux-socket peer for tap_interop (run inside the test's netns).

  tap_interop_peer.py client HOST PORT BYTES CONNS   # Linux connects to the engine's echo server
  tap_interop_peer.py server HOST PORT BYTES         # engine connects; Linux echoes and verifies

Every exchange is bounded in size and time and verified end to end:
client mode compares SHA-256 of random data sent vs echoed; server mode
checks the engine's pattern byte (i*131 + (i>>11)) & 255 and echoes it back.
"""
import hashlib
import os
import socket
import sys
import threading
import time

TIMEOUT = 30


def pattern(n):
    return bytes(((i * 131 + (i >> 11)) & 0xFF) for i in range(n))


def client(host, port, nbytes, conns):
    for k in range(conns):
        t0 = time.monotonic()
        s = socket.create_connection((host, port), timeout=TIMEOUT)
        data = os.urandom(nbytes)
        err = []

        def sender():
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except OSError as e:  # pragma: no cover - reported below
                err.append(e)

        th = threading.Thread(target=sender)
        th.start()
        got = bytearray()
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
            if len(got) > nbytes:
                break
        th.join(TIMEOUT)
        s.close()
        ok = not err and hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
        dt = time.monotonic() - t0
        print(f"peer: conn {k}: sent {nbytes} echoed {len(got)} sha256 "
              f"{'match' if ok else 'MISMATCH'} in {dt:.2f}s", flush=True)
        if not ok:
            return 1
    return 0


def server(host, port, nbytes):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(1)
    ls.settimeout(TIMEOUT)
    c, addr = ls.accept()
    c.settimeout(TIMEOUT)
    want = pattern(nbytes)
    got = 0
    ok = True
    while True:
        b = c.recv(65536)
        if not b:
            break
        if want[got:got + len(b)] != b:
            ok = False
        got += len(b)
        c.sendall(b)
        if got > nbytes:
            ok = False
            break
    c.close()
    ls.close()
    ok = ok and got == nbytes
    print(f"peer: server got {got} of {nbytes} from {addr[0]}:{addr[1]}, pattern "
          f"{'ok' if ok else 'BAD'}, echoed", flush=True)
    return 0 if ok else 1


def main(argv):
    if len(argv) >= 5 and argv[1] == "client":
        return client(argv[2], int(argv[3]), int(argv[4]), int(argv[5]) if len(argv) > 5 else 1)
    if len(argv) >= 5 and argv[1] == "server":
        return server(argv[2], int(argv[3]), int(argv[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
