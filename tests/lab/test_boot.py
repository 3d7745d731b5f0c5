"""Two emulated hosts boot with the vfwarp adapter, answer ssh, and load the
PF driver built in the build environment."""
import os
import re

from lib.pf import PF_ID, PF_KO, require_modules
from vfwarp_lab.hosts import DEVICE_THREAD_NICE


def test_both_hosts_answer_ssh_with_their_own_name(lab2):
    for name in ("h1", "h2"):
        r = lab2.ssh(name, "hostname; uname -r")
        host, kver = r.stdout.split()
        assert host == name
        assert kver == lab2.image.kver


def _threads(pid):
    """{thread id: (nice, CPU ticks)} of a process, from /proc (the name in
    parentheses may hold spaces: the fields start after its last ')')."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[int(tid)] = (int(fields[16]), int(fields[11]) + int(fields[12]))
    return out


def test_device_thread_above_the_vcpus(lab2):
    """The launcher raises each QEMU's main thread (the device model) above
    its vCPU thread, which stays at the default (hosts.DEVICE_THREAD_NICE)."""
    for name, spec in lab2.hosts.items():
        threads = _threads(spec.pid)
        assert threads[spec.pid][0] == DEVICE_THREAD_NICE, (name, threads)
        # the vCPU: the thread, other than the main one, with the most CPU time
        vcpu = max((t for t in threads if t != spec.pid), key=lambda t: threads[t][1])
        assert threads[vcpu][0] == 0, (name, threads)


def test_adapter_pf_visible_in_lspci_on_both_hosts(lab2):
    for name in ("h1", "h2"):
        out = lab2.ssh(name, f"lspci -nn -d {PF_ID}").stdout
        assert f"[{PF_ID}]" in out, out
        # The root port puts it behind a bridge, as on a real PCIe slot.
        assert not out.startswith("00:"), out


def test_iommu_active_with_groups(lab2):
    out = lab2.ssh("h1", "ls /sys/kernel/iommu_groups | wc -l").stdout
    assert int(out) > 1


def test_pf_module_loads_binds_and_unloads(lab2):
    require_modules("vfwarp_pf.ko")
    for name in ("h1", "h2"):
        lab2.ssh(name, f"dmesg -C; insmod {PF_KO}")
        try:
            drv = lab2.ssh(name, f"lspci -k -d {PF_ID}").stdout
            assert "Kernel driver in use: vfwarp_pf" in drv, drv
            log = lab2.ssh(name, "dmesg").stdout
            m = re.search(r"vfwarp adapter, hw interface v(\d+)\.(\d+), .*uplink (\w+), mac ([0-9a-f:]+)", log)
            assert m, log
            assert m.group(1) == "2"
            assert m.group(3) == "connected"
            assert m.group(4) == lab2.host(name).uplink_mac
        finally:
            lab2.ssh(name, "rmmod vfwarp_pf")
        assert "vfwarp_pf" not in lab2.ssh(name, "lsmod").stdout
