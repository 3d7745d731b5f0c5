"""Live-state readers on tool output (tests/data/README.md says how each
sample was made), and on the real `ip` against a veth in a private network
namespace where this process may create one."""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from vfwarp_manager.layers import live
from vfwarp_manager.runner import Replay, Result, Runner

DATA = Path(__file__).resolve().parents[1] / "data"


def sample(name):
    return json.loads((DATA / name).read_text())


def test_veth_has_no_vfs():
    assert live.parse_ip_link_vfs(sample("ip-link-veth.json"), "veth0") == {}


def test_answer_for_another_link_is_refused():
    with pytest.raises(live.LiveError):
        live.parse_ip_link_vfs(sample("ip-link-veth.json"), "enp1s0")


def test_pf_vfs():
    vfs = live.parse_ip_link_vfs(sample("ip-link-pf-4vfs.json"), "enp1s0")
    assert sorted(vfs) == [0, 1, 2, 3]
    assert vfs[0] == {"mac": "02:00:00:00:10:00", "vlan": 100, "qos": 3, "spoofchk": True,
                      "trust": False, "link_state": "auto", "max_tx_rate": 2000, "min_tx_rate": 500}
    # vlan_list [{}]: iproute2 leaves vlan and qos out when they are 0
    assert (vfs[2]["vlan"], vfs[2]["qos"], vfs[2]["link_state"], vfs[2]["trust"]) == (0, 0, "disable", True)


def test_devlink_rates_by_vf_number():
    dev = "pci/0000:01:00.0"
    ports = live.parse_devlink_vf_ports(sample("devlink-port-switchdev.json"), dev)
    assert ports == {"1": 0, "2": 1, "3": 2, "4": 3}        # the physical port is not a VF
    r = live.parse_rate_tree(sample("devlink-rate-switchdev.json"), dev, ports)
    assert set(r["nodes"]) == {"vfw-blue", "vfw-gone", "other"}
    assert r["nodes"]["vfw-blue"] == {"tx_share": 250000000, "tx_max": 500000000, "tx_priority": 0,
                                      "tx_weight": 10, "parent": ""}
    # what devlink leaves out (zeros, the root) is spelled out
    assert r["leaves"][1] == {"tx_share": 0, "tx_max": 125000000, "tx_priority": 0,
                              "tx_weight": 0, "parent": "vfw-blue"}
    assert r["leaves"][2]["parent"] == "" and r["leaves"][3]["parent"] == "other"
    assert live.parse_devlink_eswitch(sample("devlink-eswitch-switchdev.json")) == "switchdev"


def test_sysfs_sriov_and_missing_pf():
    r = Replay({}, files={"/sys/class/net/enp1s0/device/sriov_numvfs": "4\n",
                          "/sys/class/net/enp1s0/device/sriov_totalvfs": "128\n"})
    assert live.read_sriov(r, "enp1s0") == {"numvfs": 4, "totalvfs": 128}
    with pytest.raises(live.LiveError, match="no SR-IOV PF"):
        live.read_sriov(r, "eth9")


def test_tool_failure_is_a_live_error():
    argv = ("ip", "-j", "-d", "link", "show", "dev", "enp1s0")
    r = Replay({argv: Result(argv, 1, "", 'Device "enp1s0" does not exist.\n')})
    with pytest.raises(live.LiveError, match="does not exist"):
        live.read_ip_link_vfs(r, "enp1s0")


def test_runner_refuses_shell_strings():
    with pytest.raises(TypeError):
        Runner().run("ip link show; reboot")


class NetnsRunner(Runner):
    """Runs the real tools inside another process's network namespace."""

    def __init__(self, pid):
        self.prefix = ["nsenter", f"--net=/proc/{pid}/ns/net", "--"]

    def run(self, argv):
        return super().run(self.prefix + list(argv))


@pytest.fixture
def private_netns():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        pytest.skip("needs root, unshare and nsenter to make a private network namespace")
    p = subprocess.Popen(["unshare", "-n", "sleep", "30"])
    try:
        # Until unshare has run, the child is still in our namespace: wait
        # (bounded) for its namespace to differ, or links would land on the host.
        own = os.readlink("/proc/self/ns/net")
        for _ in range(200):
            try:
                if os.readlink(f"/proc/{p.pid}/ns/net") != own:
                    break
            except FileNotFoundError:
                pass
            time.sleep(0.01)
        else:
            pytest.fail("unshare -n did not give the child its own network namespace within 2 s")
        yield NetnsRunner(p.pid)
    finally:
        p.kill()
        p.wait()


def test_real_ip_on_a_veth(private_netns):
    r = private_netns
    for argv in (["ip", "link", "add", "vfwt0", "type", "veth", "peer", "name", "vfwt1"],
                 ["ip", "link", "set", "vfwt0", "address", "02:00:00:00:00:42"]):
        assert r.run(argv).returncode == 0, argv
    assert live.read_ip_link_vfs(r, "vfwt0") == {}
    with pytest.raises(live.LiveError, match="does not exist"):
        live.read_ip_link_vfs(r, "vfwt9")
