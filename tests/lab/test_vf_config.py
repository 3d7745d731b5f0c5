"""VF configuration through the standard interface (issue 3, PF control path):
`ip link set <pf> vf N mac/vlan/qos/spoofchk/trust/state/min_tx_rate/
max_tx_rate` goes through the PF driver's ndo_set_vf_* to the adapter's admin
queue. Each setting shows in `ip -d link show <pf>` and the device agrees:
the driver's debugfs vf_config reads every VF back from the device with
GET_VF_CONFIG (including the device's config generation counter), and the
device's own admin command counters (ethtool -S dev_aq_cmds_ok/err) move.
Out-of-range requests fail with an error and change nothing.

Runs on h1 of the session's lab2; every test loads vfwarp_pf and leaves the
host without VFs or the module, also on failure.
"""
import contextlib
import re

from lib.pf import PF_BDF, PF_ID, PF_KO, require_modules

HOST = "h1"
NUM_VFS = 4


def ssh(lab, cmd, check=True):
    return lab.ssh(HOST, cmd, check=check, timeout=600)


@contextlib.contextmanager
def pf_netdev(lab, num_vfs=NUM_VFS):
    """Load vfwarp_pf, create num_vfs VFs; yields (pci address, netdev)."""
    require_modules("vfwarp_pf.ko")
    # settled: udev renames the new netdev (eth0 -> enp1s0) after insmod
    # returns; a name read before that is gone by the next command (CI)
    ssh(lab, f"dmesg -C; insmod {PF_KO}; udevadm settle -t 60")
    try:
        pf = ssh(lab, f"lspci -D -n -d {PF_ID}").stdout.split()[0]
        dev = ssh(lab, f"ls /sys/bus/pci/devices/{pf}/net").stdout.split()[0]
        ssh(lab, "mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug")
        if num_vfs:
            ssh(lab, f"echo {num_vfs} > /sys/class/net/{dev}/device/sriov_numvfs")
        yield pf, dev
    finally:
        ssh(lab, f"""
D=/sys/bus/pci/devices/{PF_BDF}
[ -d /sys/module/vfwarp_pf ] && echo 0 > $D/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null; true""", check=False)
        assert "vfwarp_pf" not in ssh(lab, "lsmod").stdout


def vf_lines(lab, dev):
    """{vf index: its line of `ip -d link show`}."""
    out = ssh(lab, f"ip -d link show {dev}").stdout
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"^\s*vf (\d+)\b.*$", out, re.M)}


def dev_view(lab, pf):
    """{vf: {field: value}} as the device reports it (GET_VF_CONFIG)."""
    out = ssh(lab, f"cat /sys/kernel/debug/vfwarp_pf/{pf}/vf_config").stdout
    view = {}
    for ln in out.splitlines():
        f = ln.split()
        assert f[0] == "vf" and f[2] != "error", ln
        view[int(f[1])] = dict(zip(f[2::2], f[3::2]))
    return view


def ethtool_stats(lab, dev):
    out = ssh(lab, f"ethtool -S {dev}").stdout
    return {k.strip(): int(v) for k, v in re.findall(r"^\s*(\w+): (\d+)$", out, re.M)}


def test_pf_netdev_mac_carrier_ethtool(lab2):
    with pf_netdev(lab2, num_vfs=0) as (pf, dev):
        log = ssh(lab2, "dmesg").stdout
        m = re.search(r"vfwarp adapter, hw interface v\d+\.\d+, features \S+, uplink (\w+), "
                      r"mac ([0-9a-f:]{17})", log)
        assert m, log
        ssh(lab2, f"ip link set {dev} up")
        addr = ssh(lab2, f"cat /sys/class/net/{dev}/address").stdout.strip()
        carrier = ssh(lab2, f"cat /sys/class/net/{dev}/carrier").stdout.strip()
        assert addr == m.group(2)
        assert carrier == ("1" if m.group(1) == "connected" else "0")
        info = ssh(lab2, f"ethtool -i {dev}").stdout
        assert "driver: vfwarp_pf" in info and f"bus-info: {pf}" in info, info
        st = ethtool_stats(lab2, dev)
        assert {"aq_cmds", "aq_errors", "aq_timeouts", "dev_aq_cmds_ok",
                "dev_aq_cmds_err"} <= set(st), st
        # The PF transmits nothing yet: frames are counted as dropped.
        ssh(lab2, f"ip link set {dev} down")


def test_sriov_numvfs_through_class_net(lab2):
    with pf_netdev(lab2, num_vfs=0) as (pf, dev):
        ssh(lab2, f"echo 3 > /sys/class/net/{dev}/device/sriov_numvfs")
        assert sorted(vf_lines(lab2, dev)) == [0, 1, 2]
        assert sorted(dev_view(lab2, pf)) == [0, 1, 2]
        ssh(lab2, f"ip link set {dev} vf 0 trust on mac 02:00:00:00:aa:01")
        assert dev_view(lab2, pf)[0]["trust"] == "1"
        ssh(lab2, f"echo 0 > /sys/class/net/{dev}/device/sriov_numvfs")
        assert vf_lines(lab2, dev) == {}
        # Removed VFs forget their configuration on the device.
        ssh(lab2, f"echo 1 > /sys/class/net/{dev}/device/sriov_numvfs")
        d = dev_view(lab2, pf)[0]
        assert (d["trust"], d["mac"], d["spoofchk"]) == ("0", "00:00:00:00:00:00", "1"), d
        ssh(lab2, f"echo 0 > /sys/class/net/{dev}/device/sriov_numvfs")


def test_vf_settings_show_in_ip_link_and_device(lab2):
    with pf_netdev(lab2) as (pf, dev):
        before = dev_view(lab2, pf)
        assert before[1]["spoofchk"] == "1" and before[1]["trust"] == "0", before
        st0 = ethtool_stats(lab2, dev)
        steps = [
            ("mac 02:aa:bb:cc:dd:01", "link/ether 02:aa:bb:cc:dd:01", ("mac", "02:aa:bb:cc:dd:01")),
            ("vlan 100 qos 5", "vlan 100, qos 5", ("vlan", "100")),
            ("spoofchk off", "spoof checking off", ("spoofchk", "0")),
            ("trust on", "trust on", ("trust", "1")),
            ("state disable", "link-state disable", ("link_state", "2")),
            ("max_tx_rate 1000", "max_tx_rate 1000Mbps", ("max_rate", "1000")),
            ("min_tx_rate 100", "min_tx_rate 100Mbps", ("min_rate", "100")),
            ("state enable", "link-state enable", ("link_state", "1")),
        ]
        for arg, shown, (field, val) in steps:
            ssh(lab2, f"ip link set {dev} vf 1 {arg}")
            line = vf_lines(lab2, dev)[1]
            assert shown in line, (arg, line)
            assert dev_view(lab2, pf)[1][field] == val, (arg, dev_view(lab2, pf)[1])
        after = dev_view(lab2, pf)
        assert after[1]["qos"] == "5" and after[1]["proto"] == "0x8100", after[1]
        assert int(after[1]["gen"]) == int(before[1]["gen"]) + len(steps), (before[1], after[1])
        # Other VFs untouched, on the device too.
        assert all(after[v] == before[v] for v in (0, 2, 3)), (before, after)
        st1 = ethtool_stats(lab2, dev)
        assert st1["dev_aq_cmds_ok"] - st0["dev_aq_cmds_ok"] >= len(steps)
        assert st1["dev_aq_cmds_err"] == st0["dev_aq_cmds_err"]
        assert st1["aq_timeouts"] == 0
        # Back to defaults; the device follows.
        ssh(lab2, f"ip link set {dev} vf 1 vlan 0 spoofchk on trust off state auto "
                  f"min_tx_rate 0 max_tx_rate 0")
        d = dev_view(lab2, pf)[1]
        assert (d["vlan"], d["qos"], d["spoofchk"], d["trust"], d["link_state"],
                d["min_rate"], d["max_rate"]) == ("0", "0", "1", "0", "0", "0", "0"), d
        # VF stats come from the device (GET_VF_STATS; no data path yet: 0).
        out = ssh(lab2, f"ip -s -d link show {dev}").stdout
        assert re.search(r"vf 1 .*", out)
        assert "error" not in dev_view(lab2, pf)


def test_out_of_range_refused_and_nothing_changes(lab2):
    with pf_netdev(lab2) as (pf, dev):
        ssh(lab2, f"ip link set {dev} vf 2 vlan 10 qos 1 max_tx_rate 500 min_tx_rate 50")
        ip_before = ssh(lab2, f"ip -d link show {dev}").stdout
        dev_before = dev_view(lab2, pf)
        bad = [
            f"vf {NUM_VFS} mac 02:00:00:00:00:42",
            f"vf {NUM_VFS} trust on",
            "vf 2 vlan 4096",
            "vf 2 vlan 10 qos 8",
            "vf 2 vlan 10 proto 802.1ad",
            "vf 2 min_tx_rate 600 max_tx_rate 500",
            "vf 2 max_tx_rate 10001",
            "vf 2 mac 01:00:5e:00:00:01",
        ]
        for arg in bad:
            r = ssh(lab2, f"ip link set {dev} {arg}", check=False)
            assert r.returncode != 0, (arg, r.stdout, r.stderr)
            assert r.stderr.strip(), arg
        r = ssh(lab2, f"ip link set {dev} vf 2 vlan 10 proto 802.1ad", check=False)
        assert "Protocol not supported" in r.stderr, r.stderr
        assert ssh(lab2, f"ip -d link show {dev}").stdout == ip_before
        assert dev_view(lab2, pf) == dev_before
        log = ssh(lab2, "dmesg").stdout
        assert f"VF {NUM_VFS} does not exist ({NUM_VFS} VFs)" in log, log
        assert "VLAN protocol 0x88a8 not supported" in log, log
        assert "exceeds the link speed" in log, log
