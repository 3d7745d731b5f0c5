"""The wire between emulated hosts' adapter uplinks.

Two hosts: each QEMU's uplink is a `dgram` netdev on a Unix datagram socket
pointing at the other's, so frames go QEMU to QEMU with nothing in between.
More hosts: every uplink points at a hub (this module run as a process) that
repeats each frame to all other ports, like an Ethernet hub. No IP traffic is
involved either way: the wire is Unix sockets inside the lab's state dir.
"""
import os
import select
import socket
import sys
import time
from pathlib import Path


def port_path(state: Path, host: str) -> Path:
    return state / f"wire-{host}.sock"


def hub_path(state: Path) -> Path:
    return state / "wire-hub.sock"


def netdev_arg(state: Path, host: str, hosts: list) -> str:
    """QEMU -netdev option for `host`'s uplink."""
    local = port_path(state, host)
    if len(hosts) == 2:
        other = [h for h in hosts if h != host][0]
        remote = port_path(state, other)
    else:
        remote = hub_path(state)
    return (f"dgram,id=uplink,local.type=unix,local.path={local},"
            f"remote.type=unix,remote.path={remote}")


def run_hub(state: Path, hosts: list, max_frame: int = 65536,
            stall_s: float = 0.05) -> None:
    """Repeat frames from any port to every other port until killed.

    A port whose receive queue is full gets up to `stall_s` to drain, then
    the frame is dropped for that port: one stuck host (paused QEMU) must not
    stop the others, and the hub must never block forever."""
    path = hub_path(state)
    if path.exists():
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    ports = [str(port_path(state, h)) for h in hosts]
    while True:
        select.select([sock], [], [])
        try:
            frame, sender = sock.recvfrom(max_frame)
        except BlockingIOError:
            continue
        for dst in ports:
            if dst == sender:
                continue
            # Writability of a datagram socket says nothing about the peer's
            # queue, so poll with short sleeps, bounded by stall_s.
            deadline = time.monotonic() + stall_s
            while True:
                try:
                    sock.sendto(frame, dst)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        break  # stuck port: the frame is lost for it alone
                    time.sleep(0.001)
                except OSError:
                    break  # that host is not up (yet): the frame is lost


if __name__ == "__main__":
    run_hub(Path(sys.argv[1]), sys.argv[2:])
    os._exit(0)
