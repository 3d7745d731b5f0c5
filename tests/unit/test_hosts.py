"""The launcher's ssh and QEMU command lines (lab/vfwarp_lab/hosts.py),
without booting anything."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))
from vfwarp_lab import hosts  # noqa: E402
from vfwarp_lab.paths import LabError  # noqa: E402


class _Image:
    key = Path("/nonexistent/key")


def _lab(state):
    lab = hosts.Lab.__new__(hosts.Lab)
    lab.state = state
    lab._image = _Image()
    lab.hosts = {}
    return lab


def _spec(name="h1", port=40001):
    return hosts.HostSpec(name=name, index=1, ssh_port=port)


def test_commands_share_one_kept_connection_per_host(tmp_path):
    argv = _lab(tmp_path)._mux_argv(_spec(), "true")
    assert argv[0] == "ssh" and argv[-2:] == ["root@127.0.0.1", "true"]
    assert "ControlMaster=auto" in argv
    assert f"ControlPath={tmp_path}/mux-h1-40001.ctl" in argv
    # each host, and a host rebooted on another port, has its own socket
    other = _lab(tmp_path)._mux_argv(_spec("h2", 40002), "true")
    assert f"ControlPath={tmp_path}/mux-h2-40002.ctl" in other


def test_a_state_dir_too_long_for_a_socket_gets_plain_ssh(tmp_path):
    deep = tmp_path / ("d" * 90)
    argv = _lab(deep)._mux_argv(_spec(), "true")
    assert not any(a.startswith("ControlPath") for a in argv)
    assert argv == _lab(deep)._ssh_argv(_spec(), "true")


@pytest.mark.parametrize("err", [
    "mux_client_request_session: session request failed: Session open refused by peer",
    "Control socket connect(/tmp/x/mux-h1-1.ctl): Connection refused",
    "channel 2: open failed: administratively prohibited: open failed",
])
def test_failures_of_the_shared_connection_are_told_from_the_commands(err):
    assert hosts.MUX_FAILED.search(err)


def test_a_commands_own_error_is_not_taken_for_one():
    assert not hosts.MUX_FAILED.search("ip: Cannot find device \"vfeth\"")


def test_device_options_reach_qemu_only_when_well_formed(monkeypatch):
    monkeypatch.delenv("VFWARP_DEVICE_OPTS", raising=False)
    assert hosts.device_opts() == ""
    monkeypatch.setenv("VFWARP_DEVICE_OPTS", "line-rate=12000000,total-vfs=8")
    assert hosts.device_opts() == ",line-rate=12000000,total-vfs=8"
    for bad in ("line-rate", "a=b,c", "x=1 -device foo", "y=$(id)"):
        monkeypatch.setenv("VFWARP_DEVICE_OPTS", bad)
        with pytest.raises(LabError):
            hosts.device_opts()
