"""A SYN flood from the lab wire (issue 33): TCP SYNs written straight into
a host's uplink, as any machine on the hypervisor's wire could send them.

The lab's wire is a Unix datagram socket per host (lab/vfwarp_lab/wire.py):
each datagram is one Ethernet frame, and QEMU's dgram netdev reads every
datagram that reaches its socket, whoever sent it. So a process of the
machine writing frames to `wire-h1.sock` is a third station on h1's wire:
it costs neither host any CPU (a sender inside h2 would take the vCPU its
own RDMA peer needs), and its rate is exact.

Each SYN comes from a different source address and port, from MACs and
addresses no lab host owns (10.77.0.128/25; the hosts' VFs are .11-.2x), so
every one is a new half-open connection for the listener and its SYN-ACK
goes to nobody.
"""
import random
import socket
import struct
import threading
import time
from pathlib import Path

ETH_P_IP = 0x0800


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _ip4(a: str) -> bytes:
    return socket.inet_aton(a)


def syn_frame(dst_mac: bytes, src_mac: bytes, sip: str, dip: str, sport: int,
              dport: int, seq: int) -> bytes:
    """An Ethernet + IPv4 + TCP SYN with an MSS option and correct
    checksums (the adapter checks both)."""
    opts = struct.pack("!BBH", 2, 4, 1460)                      # MSS 1460
    tcp_len = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, (tcp_len // 4) << 4,
                      0x02, 65535, 0, 0) + opts
    pseudo = _ip4(sip) + _ip4(dip) + struct.pack("!BBH", 0, 6, tcp_len)
    tcp = tcp[:16] + struct.pack("!H", _csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tcp_len, seq & 0xFFFF, 0x4000,
                     64, 6, 0, _ip4(sip), _ip4(dip))
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return dst_mac + src_mac + struct.pack("!H", ETH_P_IP) + ip + tcp


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", ""))


class SynFlood:
    """SYNs at `rate` per second to dip:dport (dst_mac) written into the
    wire socket `port`, for `secs` seconds at most, from a thread: start(),
    then wait() returns the count sent. Bounded by time and by count
    (rate * secs); a full socket (QEMU not reading) blocks the sender, which
    then falls behind rather than bursting to catch up by more than four
    milliseconds' worth."""

    def __init__(self, port: Path, dst_mac: str, dip: str, dport: int,
                 rate: int, secs: float, seed: int = 33):
        self.port, self.dst, self.dip, self.dport = str(port), mac_bytes(dst_mac), dip, dport
        self.rate, self.secs, self.rng = rate, secs, random.Random(seed)
        self.sent = 0
        self.elapsed = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _frame(self) -> bytes:
        r = self.rng
        src_mac = bytes([0x02, 0x5f]) + r.randbytes(4)          # locally administered
        sip = f"10.77.0.{r.randrange(128, 255)}"
        return syn_frame(self.dst, src_mac, sip, self.dip, r.randrange(1024, 65536),
                         self.dport, r.getrandbits(32))

    def _run(self):
        total = int(self.rate * self.secs)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.settimeout(1.0)
            t0 = time.monotonic()
            end = t0 + self.secs
            while self.sent < total:
                now = time.monotonic()
                if now >= end:
                    break
                due = min(total, int((now - t0) * self.rate))
                # at most 4 ms of frames at once (a sleep of 1 ms takes more):
                # a late thread does not burst
                for _ in range(min(due - self.sent, max(1, self.rate // 250))):
                    try:
                        s.sendto(self._frame(), self.port)
                    except (socket.timeout, BlockingIOError):
                        break
                    self.sent += 1
                time.sleep(0.001)
            self.elapsed = time.monotonic() - t0

    def start(self):
        self._thread.start()
        return self

    def wait(self) -> int:
        self._thread.join(self.secs + 30)
        assert not self._thread.is_alive(), "the SYN flood's thread did not end"
        return self.sent
