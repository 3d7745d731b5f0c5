"""The launcher's waits under load (lab/vfwarp_lab/hosts.py, tenants.py),
natively: an ssh that takes longer than its own timeout is "not up yet",
never a traceback; the boot timeout is what ends a wait, with the host named.
The probes are small scripts standing in for ssh; nothing boots."""
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))
from vfwarp_lab import hosts, tenants  # noqa: E402
from vfwarp_lab.paths import LabError  # noqa: E402

# longer than the 60 s probe timeout of before: an old wait gets its TimeoutExpired
HANG = "exec sleep 90"


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def qemu(tmp_path):
    """A process standing in for a host's QEMU: alive, its argv naming the
    state directory (what `down` looks for), in a session of its own."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", str(tmp_path)],
                         start_new_session=True)
    yield p
    if p.poll() is None:
        p.kill()
    p.wait()


def lab_with(tmp_path, qemu, probe: str, logs: list):
    lab = hosts.Lab.__new__(hosts.Lab)
    lab.state = tmp_path
    lab._image = SimpleNamespace(key=Path("/nonexistent/key"))
    lab.hosts = {"h1": hosts.HostSpec(name="h1", index=1, ssh_port=40001, pid=qemu.pid)}
    lab.hub_pid = 0
    lab.log = logs.append
    lab._ssh_argv = lambda spec, command: [probe]
    lab._prioritize_device = lambda spec: None
    return lab


@pytest.fixture
def short(monkeypatch):
    monkeypatch.setattr(hosts, "SSH_PROBE_TIMEOUT", 0.5, raising=False)
    monkeypatch.setattr(hosts, "SSH_PROBE_INTERVAL", 0.1, raising=False)
    monkeypatch.setattr(hosts, "SSH_CONTROL_TIMEOUT", 0.5, raising=False)
    monkeypatch.setattr(tenants, "SSH_CONTROL_TIMEOUT", 0.5, raising=False)


def test_a_probe_past_its_timeout_is_not_up_yet(tmp_path, qemu, short):
    # the first probe hangs (a loaded machine), the second answers
    count = tmp_path / "probes"
    probe = script(tmp_path / "probe", f'echo x >>{count}\n'
                                       f'[ "$(wc -l <{count})" -ge 2 ] && exit 0\n{HANG}')
    logs = []
    lab_with(tmp_path, qemu, probe, logs)._wait_all_ssh(["h1"], boot_timeout=30)
    assert count.read_text().count("x") == 2
    assert any(m.startswith("h1: up in") for m in logs), logs


def test_the_boot_timeout_ends_the_wait_naming_the_host_and_its_last_probe(
        tmp_path, qemu, short):
    probe = script(tmp_path / "probe", HANG)
    t0 = time.monotonic()
    with pytest.raises(LabError) as e:
        lab_with(tmp_path, qemu, probe, [])._wait_all_ssh(["h1"], boot_timeout=2)
    took = time.monotonic() - t0
    assert "h1: no ssh answer within 2s; last probe: ssh probe timed out after" in str(e.value)
    assert "h1.serial.log" in str(e.value)
    assert 2 <= took < 4, f"the wait went {took:.1f}s past a 2 s boot timeout"


def test_a_refused_probe_is_told_in_the_error(tmp_path, qemu, short):
    probe = script(tmp_path / "probe", "echo 'ssh: connect to host 127.0.0.1 port 40001: "
                                       "Connection refused' >&2; exit 255")
    with pytest.raises(LabError, match="last probe: ssh exited 255: ssh: connect to host "
                                       "127.0.0.1 port 40001: Connection refused"):
        lab_with(tmp_path, qemu, probe, [])._wait_all_ssh(["h1"], boot_timeout=1)


def test_down_stops_qemu_when_the_kept_connection_does_not_close(
        tmp_path, qemu, short, monkeypatch):
    # `ssh -O exit` to a master that never answers
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "ssh", HANG)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    logs = []
    lab = lab_with(tmp_path, qemu, "true", logs)
    lab._image = SimpleNamespace(key=Path("/nonexistent/key"), path=Path("/nonexistent/disk"))
    ctl = lab._mux_path(lab.hosts["h1"])
    ctl.touch()
    assert lab.down() == 1
    assert qemu.wait(timeout=15) is not None
    assert not ctl.exists()
    assert any("did not close" in m for m in logs), logs


def tenants_at(tmp_path):
    lab = SimpleNamespace(state=tmp_path, host=lambda name: SimpleNamespace(index=1))
    ten = tenants.Tenants(lab, progress=lambda msg: None)
    ten.adopt("h1", "t1", 0)
    return ten


def test_a_tenant_probe_that_runs_out_of_time_is_not_up_yet(tmp_path):
    # Tenants.ssh(check=False) turns its own timeout into exit 124, but a
    # step inside it (closing a stale kept connection) may raise TimeoutExpired
    ten = tenants_at(tmp_path)
    calls = []

    def ssh(name, command, check=True, timeout=300, connect_timeout=90):
        calls.append(command)
        if len(calls) == 1:
            raise subprocess.TimeoutExpired(["ssh", "-O", "exit"], 30)
        return subprocess.CompletedProcess(command, 0, "", "")
    ten.ssh = ssh
    assert ten.wait_ssh("t1", timeout=60) >= 0
    assert len(calls) == 2


def test_a_tenant_probe_that_cannot_run_is_an_error_at_once(tmp_path):
    ten = tenants_at(tmp_path)

    def ssh(name, command, check=True, timeout=300, connect_timeout=90):
        raise LabError("unknown host 'h1' (hosts: none: the lab is down)")
    ten.ssh = ssh
    with pytest.raises(LabError, match="unknown host"):
        ten.wait_ssh("t1", timeout=60)


def test_closing_a_tenants_hung_connection_goes_on(tmp_path, short, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "ssh", HANG)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    ten = tenants_at(tmp_path)
    ctl = ten._control_path("t1")
    ctl.touch()
    ten.close_ssh("t1")
    assert not ctl.exists()


def test_a_detach_wait_goes_on_when_libvirt_is_slow_to_answer(tmp_path):
    ten = tenants_at(tmp_path)
    ten.virsh = lambda host, args, check=True, stdin_xml=None, timeout=300: \
        subprocess.CompletedProcess(args, 0, "", "")
    reads = []

    def vf_devices(host, name):
        reads.append(name)
        if len(reads) == 1:
            raise subprocess.TimeoutExpired(["ssh", "virsh dumpxml t1"], 300)
        return []
    ten.vf_devices = vf_devices
    xml = "<hostdev><source><address domain='0' bus='1' slot='0' function='2'/></source></hostdev>"
    assert ten.detach("h1", "t1", xml, wait=60) >= 0
    assert len(reads) == 2
