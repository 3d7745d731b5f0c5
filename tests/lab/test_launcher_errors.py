"""Bad input to the launcher: one clear line of error, nothing left behind."""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from vfwarp_lab import Lab, LabError

LABCTL = Path(__file__).resolve().parents[2] / "lab" / "labctl"


def _qemu_pids_for(state):
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "qemu-system" in cmd and str(state) in cmd:
                pids.append(int(p.name))
    return pids


def _run(*args):
    return subprocess.run([sys.executable, str(LABCTL), *args], capture_output=True, text=True)


def test_unknown_host_is_one_line_error(tmp_path):
    r = _run("--state", str(tmp_path), "ssh", "h9", "true")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "unknown host 'h9'" in r.stderr


def test_missing_image_is_one_line_error(tmp_path):
    r = _run("--state", str(tmp_path), "--image", str(tmp_path / "nope"), "up")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "missing guest image" in r.stderr
    assert not _qemu_pids_for(tmp_path)


def test_port_in_use_is_refused_before_anything_starts(tmp_path, image):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        r = _run("--state", str(tmp_path), "up", "-n", "1", "--ssh-port-base", str(busy))
    assert r.returncode == 2
    assert f"ssh port {busy} on 127.0.0.1 is in use" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert not _qemu_pids_for(tmp_path)


def test_qemu_dying_at_boot_reports_and_cleans_up(tmp_path, image):
    lab = Lab(tmp_path, image=image, log=lambda m: None)
    # A real QEMU failure: an option this QEMU does not know, on the 2nd host.
    orig = lab.qemu_argv

    def argv(qemu, img, spec, names):
        a = orig(qemu, img, spec, names)
        return a + (["-device", "no-such-device"] if spec.name == "h2" else [])

    lab.qemu_argv = argv
    with pytest.raises(LabError) as e:
        lab.up(2, boot_timeout=120)
    msg = str(e.value)
    assert msg.startswith("h") and "QEMU died at boot" in msg and "no-such-device" in msg
    assert "\n" not in msg
    assert not _qemu_pids_for(tmp_path)
    assert not list(tmp_path.glob("*.sock")) and not list(tmp_path.glob("*.monitor"))
    assert Lab(tmp_path).status() == []
