"""Switchdev mode of the adapter's eswitch (issue 16, docs/switchdev.md):
`devlink dev eswitch set ... mode switchdev` gives every VF a representor
netdev (named by udev from its devlink port: enp1s0npf0vfN), the VFs'
traffic that nothing offloaded forwards goes through the representors
(the slow path), and a Linux bridge of representors and the uplink then
forwards VF-to-VF and VF-to-wire traffic. Legacy mode forwards in the
adapter as before once switched back.

Modelled on the kernel's netdevsim switchdev selftests: mode on and off
with VFs present, representors following the VFs, traffic through them.
Runs on the session's lab2; h2 stays in legacy mode as the remote peer.
Every test leaves the hosts without the modules, also on failure.
"""
import json

from vf_env import PF_ID, addr, ping, vfs_up

BDF = f"$(lspci -D -n -d {PF_ID} | awk 'NR==1{{print $1}}')"


def pf_dev(lab, host="h1"):
    """(pci BDF, PF netdev name) of `host`'s adapter."""
    out = lab.ssh(host, f"B={BDF}; echo $B $(ls /sys/bus/pci/devices/$B/net)").stdout.split()
    return out[0], out[1]


def mode(lab, bdf, host="h1"):
    out = lab.ssh(host, f"devlink -j dev eswitch show pci/{bdf}").stdout
    return json.loads(out)["dev"][f"pci/{bdf}"]["mode"]


def set_mode(lab, bdf, m, host="h1", check=True):
    return lab.ssh(host, f"devlink dev eswitch set pci/{bdf} mode {m} && udevadm settle -t 20",
                   check=check)


def reprs(lab, host="h1"):
    """{phys_port_name: link} of the host's representors (ports pfNvfM)."""
    links = json.loads(lab.ssh(host, "ip -j -d -s link show").stdout)
    return {l["phys_port_name"]: l for l in links
            if l.get("phys_port_name", "").startswith("pf") and "vf" in l["phys_port_name"]}


def test_switchdev_on_and_off_representors_follow_vfs(lab2):
    with vfs_up(lab2, hosts=("h1",)):
        bdf, pf = pf_dev(lab2)
        assert mode(lab2, bdf) == "legacy"
        assert reprs(lab2) == {}

        set_mode(lab2, bdf, "switchdev")
        assert mode(lab2, bdf) == "switchdev"
        r = reprs(lab2)
        assert sorted(r) == ["pf0vf0", "pf0vf1"], list(r)
        names = {p: l["ifname"] for p, l in r.items()}
        # udev's predictable name from the PF's path and the port name
        assert names == {p: f"{pf}n{p}" for p in r}, names
        # one switch: every representor reports the same switch ID
        assert len({l["phys_switch_id"] for l in r.values()}) == 1, r
        info = lab2.ssh("h1", f"devlink -j port show pci/{bdf}/1").stdout
        port = json.loads(info)["port"][f"pci/{bdf}/1"]
        assert port["netdev"] == names["pf0vf0"] and port["flavour"] == "pcivf", port
        # setting the mode in force again changes nothing
        set_mode(lab2, bdf, "switchdev")
        assert {p: l["ifname"] for p, l in reprs(lab2).items()} == names

        # back to legacy: the representors go; on again: the same names
        set_mode(lab2, bdf, "legacy")
        assert mode(lab2, bdf) == "legacy" and reprs(lab2) == {}
        set_mode(lab2, bdf, "switchdev")
        assert {p: l["ifname"] for p, l in reprs(lab2).items()} == names

        # VFs removed and created in switchdev mode: representors follow
        lab2.ssh("h1", f"echo 0 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert reprs(lab2) == {}
        lab2.ssh("h1", f"echo 3 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert sorted(reprs(lab2)) == ["pf0vf0", "pf0vf1", "pf0vf2"]
        assert mode(lab2, bdf) == "switchdev"
        # vfs_up's clean-up unloads the driver in switchdev mode: removal
        # puts the device back to legacy and takes the representors along
        dmesg = lab2.ssh("h1", "dmesg").stdout
        assert "WARNING" not in dmesg and "BUG" not in dmesg, dmesg[-3000:]


BRIDGE = r"""
set -e
ip link add br0 type bridge
for d in %(ports)s; do ip link set $d master br0; ip link set $d up; done
ip link set br0 up
# STP off, forward delay 0: the bridge forwards at once
ip link set br0 type bridge stp_state 0 forward_delay 0
"""


def test_slow_path_through_representors_and_a_bridge(lab2):
    with vfs_up(lab2):
        bdf, pf = pf_dev(lab2)
        # legacy: the adapter forwards VF0 -> VF1 itself
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        set_mode(lab2, bdf, "switchdev")
        r = reprs(lab2)
        names = [r["pf0vf0"]["ifname"], r["pf0vf1"]["ifname"]]
        try:
            # switchdev, nothing offloaded, representors not bridged: the
            # VFs' frames end at their representors, nothing passes
            lab2.ssh("h1", f"ip link set {names[0]} up; ip link set {names[1]} up")
            before = reprs(lab2)["pf0vf0"]["stats64"]["rx"]["packets"]
            assert ping(lab2, "h1", 0, addr("h1", 1), count=2) == 0
            assert reprs(lab2)["pf0vf0"]["stats64"]["rx"]["packets"] > before

            # a bridge of the representors and the uplink (the PF netdev)
            lab2.ssh("h1", BRIDGE % {"ports": " ".join(names + [pf])})
            assert ping(lab2, "h1", 0, addr("h1", 1)) == 3          # VF -> VF
            assert ping(lab2, "h1", 0, addr("h2", 0)) == 3          # VF -> wire
            assert ping(lab2, "h2", 1, addr("h1", 1)) == 3          # wire -> VF
            st = reprs(lab2)
            for p in ("pf0vf0", "pf0vf1"):
                s = st[p]["stats64"]
                # every frame of the VFs went through the host: slow path
                assert s["rx"]["packets"] >= 6 and s["tx"]["packets"] >= 6, (p, s)
        finally:
            lab2.ssh("h1", "ip link del br0", check=False)
        # legacy again: the adapter forwards, no representor left
        set_mode(lab2, bdf, "legacy")
        assert reprs(lab2) == {}
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3
