"""The lab wire's hub (more than two hosts): every frame reaches every other
port, never its sender, unchanged; a missing port does not stall the hub."""
import socket
import subprocess
import sys
import time
from pathlib import Path

from vfwarp_lab import wire

LAB = Path(__file__).resolve().parents[2] / "lab"


def _port(state, name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(wire.port_path(state, name)))
    s.settimeout(5)
    return s


def test_netdev_args_point_at_peer_or_hub(tmp_path):
    two = wire.netdev_arg(tmp_path, "h1", ["h1", "h2"])
    assert f"local.path={tmp_path}/wire-h1.sock" in two
    assert f"remote.path={tmp_path}/wire-h2.sock" in two
    three = wire.netdev_arg(tmp_path, "h3", ["h1", "h2", "h3"])
    assert f"remote.path={tmp_path}/wire-hub.sock" in three


def _start_hub(state, names):
    hub = subprocess.Popen([sys.executable, "-m", "vfwarp_lab.wire", str(state), *names], cwd=LAB)
    deadline = time.monotonic() + 10
    while not wire.hub_path(state).exists():
        assert time.monotonic() < deadline, "hub did not start"
        time.sleep(0.05)
    return hub


def test_hub_repeats_to_all_other_ports(tmp_path):
    names = ["h1", "h2", "h3", "h4"]
    ports = {n: _port(tmp_path, n) for n in names[:3]}  # h4 is "not up"
    hub = _start_hub(tmp_path, names)
    try:
        frame = bytes(range(256)) * 6  # 1536 bytes, one full-size frame
        for i in range(50):
            ports["h1"].sendto(frame + bytes([i]), str(wire.hub_path(tmp_path)))
            for n in ("h2", "h3"):
                assert ports[n].recv(65536) == frame + bytes([i])
        ports["h1"].setblocking(False)
        try:
            echoed = ports["h1"].recv(65536)
        except BlockingIOError:
            echoed = None
        assert echoed is None, "the hub sent a frame back to its sender"
    finally:
        hub.kill()
        hub.wait()
        for s in ports.values():
            s.close()


def test_a_stuck_port_does_not_stop_the_others(tmp_path):
    names = ["h1", "h2", "h3"]
    ports = {n: _port(tmp_path, n) for n in names}  # h3 never reads
    hub = _start_hub(tmp_path, names)
    try:
        start = time.monotonic()
        for i in range(100):
            ports["h1"].sendto(bytes([i]) * 1536, str(wire.hub_path(tmp_path)))
            assert ports["h2"].recv(65536) == bytes([i]) * 1536
        # h3's queue filled long ago; each later frame cost it at most ~50 ms
        # and was then dropped for h3 alone.
        assert time.monotonic() - start < 100 * 0.05 + 5
        ports["h3"].setblocking(False)
        queued = 0
        try:
            while True:
                ports["h3"].recv(65536)
                queued += 1
        except BlockingIOError:
            pass
        assert 0 < queued < 100
    finally:
        hub.kill()
        hub.wait()
        for s in ports.values():
            s.close()
