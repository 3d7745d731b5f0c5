"""Two emulated hosts boot with the vfwarp adapter, answer ssh, and load the
PF driver built in the build environment."""
import re

from vfwarp_lab.paths import guest_share_dir

PF_ID = "1234:f0a0"


def test_both_hosts_answer_ssh_with_their_own_name(lab2):
    for name in ("h1", "h2"):
        r = lab2.ssh(name, "hostname; uname -r")
        host, kver = r.stdout.split()
        assert host == name
        assert kver == lab2.image.kver


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
    mod = guest_share_dir() / "modules" / "vfwarp_pf.ko"
    assert mod.exists(), "run 'make modules' first"
    for name in ("h1", "h2"):
        lab2.ssh(name, "dmesg -C; insmod /mnt/vfwarp/modules/vfwarp_pf.ko")
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
