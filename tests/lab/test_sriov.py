"""SR-IOV on the standard path (issue 3, first slice): the vfwarp PF driver
creates and removes up to 128 VFs through sysfs sriov_numvfs; every VF is
in its own IOMMU group, decodes its BAR0 (identification block, FUNC_INFO
= VF | index), has FLR and binds to vfio-pci; disabling while a VF is bound
to vfio-pci is refused with EBUSY; create/remove repeats without leaks.

Runs on h1 of the session's lab2. Every test loads vfwarp_pf and leaves the
host as it found it (no VFs, no vfwarp_pf/vfio-pci loaded), also on failure.
"""
import contextlib
import os
import re
import time

import pytest

from lib.pf import PF_ID, PF_KO, VF_ID, VF_KOS, VF_UNLOAD, no_vfwarp_modules, require_modules, vf_load

TOTAL_VFS = 128
HOST = "h1"

# Guest-side helpers, prepended to the scripts below.
SH = r"""
set -u
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
nvf() { lspci -n -d %(vf)s | wc -l; }
nvf_sysfs() { cat /sys/bus/pci/devices/*/device | grep -c '^0x%(vfdev)s$'; }
vfs() { for l in $D/virtfn*; do [ -e "$l" ] && basename "$(readlink "$l")"; done; }
""" % {"pf": PF_ID, "vf": VF_ID, "vfdev": VF_ID.split(":")[1]}

# Guest-side BAR0 access through sysfs resource0 (32-bit accesses). QEMU maps
# a VF's BARs only while the VF's Memory Space bit is set, which a driver
# sets by enabling the device: the sysfs 'enable' file does that for a VF
# without a driver.
BAR_PY = r"""
import mmap, os, sys

def sysfs(path, val=None):
    if val is None:
        return open(path).read().strip()
    with open(path, "w") as f:
        f.write(val)

class Bar0:
    def __init__(self, bdf):
        self.dev = "/sys/bus/pci/devices/" + bdf
        sysfs(self.dev + "/enable", "1")
        self.fd = os.open(self.dev + "/resource0", os.O_RDWR | os.O_SYNC)
        self.m = mmap.mmap(self.fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.r = memoryview(self.m).cast("I")
    def __getitem__(self, off):
        return self.r[off // 4]
    def __setitem__(self, off, val):
        self.r[off // 4] = val
    def close(self):
        self.r.release(); self.m.close(); os.close(self.fd)
        sysfs(self.dev + "/enable", "0")

def vfs(pf):
    base = "/sys/bus/pci/devices/" + pf
    for name in os.listdir(base):
        if name.startswith("virtfn"):
            yield int(name[6:]), os.path.basename(os.readlink(base + "/" + name))

def ident(pf):
    # "index bdf magic func_info scratch_ok" per VF
    for idx, vf in sorted(vfs(pf)):
        b = Bar0(vf)
        b[0x10] = 0xa5000000 | idx
        ok = b[0x10] == (0xa5000000 | idx)
        print(idx, vf, "%08x" % b[0x0], "%08x" % b[0x14], int(ok))
        b.close()

def flr(pf):
    # SCRATCH of VF0 and VF1 before and after an FLR of VF0
    v = dict(vfs(pf))
    b0, b1 = Bar0(v[0]), Bar0(v[1])
    b0[0x10], b1[0x10] = 0x1234abcd, 0x0badcafe
    print("before %08x %08x" % (b0[0x10], b1[0x10]))
    print("methods", sysfs("/sys/bus/pci/devices/%s/reset_method" % v[0]))
    sysfs("/sys/bus/pci/devices/%s/reset_method" % v[0], "flr")
    sysfs("/sys/bus/pci/devices/%s/reset" % v[0], "1")
    print("after %08x %08x" % (b0[0x10], b1[0x10]))
    print("magic %08x" % b0[0x0])
    b0.close(); b1.close()

globals()[sys.argv[1]](sys.argv[2])
"""


def guest_py(lab, func, pf):
    return lab.ssh(HOST, f"python3 - {func} {pf} <<'EOF'\n{BAR_PY}EOF\n").stdout


def sh(lab, script, check=True, timeout=600):
    return lab.ssh(HOST, SH + script, check=check, timeout=timeout)


def qemu_alive(lab):
    pid = lab.host(HOST).pid
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def cleanup(lab):
    """Unbind VFs from vfio-pci, remove VFs, unload the modules: the state the
    session's other tests expect. Never raises (it runs in finally)."""
    sh(lab, r"""
if [ -n "$PF" ] && [ -d /sys/module/vfwarp_pf ]; then
  for vf in $(vfs); do
    echo > /sys/bus/pci/devices/$vf/driver_override 2>/dev/null
    [ -e /sys/bus/pci/devices/$vf/driver ] && echo $vf > /sys/bus/pci/devices/$vf/driver/unbind
  done
  echo 0 > $D/sriov_numvfs
fi
%s; rmmod vfwarp_pf 2>/dev/null; modprobe -r vfio-pci 2>/dev/null; true
""" % VF_UNLOAD, check=False)


@contextlib.contextmanager
def pf_loaded(lab):
    require_modules("vfwarp_pf.ko")
    lab.ssh(HOST, f"dmesg -C; insmod {PF_KO}")
    try:
        pf = lab.ssh(HOST, f"lspci -D -n -d {PF_ID}").stdout.split()[0]
        yield pf
    finally:
        cleanup(lab)
        mods = lab.ssh(HOST, "lsmod").stdout
        assert no_vfwarp_modules(mods), mods


def vf_count(lab, pf):
    """(sriov_numvfs, VFs in lspci) in one round trip."""
    r = lab.ssh(HOST, f"cat /sys/bus/pci/devices/{pf}/sriov_numvfs; lspci -n -d {VF_ID} | wc -l")
    num, seen = r.stdout.split()
    return int(num), int(seen)


def create(lab, pf, n):
    t0 = time.monotonic()
    lab.ssh(HOST, f"echo {n} > /sys/bus/pci/devices/{pf}/sriov_numvfs", timeout=900)
    return time.monotonic() - t0


def test_pf_advertises_sriov_ari_flr_msix(lab2):
    with pf_loaded(lab2) as pf:
        d = f"/sys/bus/pci/devices/{pf}"
        r = lab2.ssh(HOST, f"cat {d}/sriov_totalvfs {d}/sriov_numvfs {d}/sriov_offset "
                           f"{d}/sriov_stride {d}/sriov_vf_device")
        total, num, offset, stride, vf_dev = r.stdout.split()
        assert (int(total), int(num), int(offset), int(stride)) == (TOTAL_VFS, 0, 1, 1)
        assert vf_dev == VF_ID.split(":")[1]
        caps = lab2.ssh(HOST, f"lspci -vvv -s {pf}").stdout
        assert "Alternative Routing-ID Interpretation (ARI)" in caps, caps
        assert "Single Root I/O Virtualization (SR-IOV)" in caps, caps
        assert re.search(r"Initial VFs: 128, Total VFs: 128", caps), caps
        assert re.search(r"DevCap:[^\n]*\n[^\n]*FLReset\+", caps), caps
        assert "MSI-X: Enable" in caps and "Count=8" in caps, caps
        # The root port forwards ARI, and the kernel turned it on.
        rp = lab2.ssh(HOST, f"lspci -vvv -s $(basename $(dirname $(readlink -f {d})))").stdout
        assert re.search(r"DevCtl2:.*ARIFwd\+", rp), rp


def test_128_vfs_own_iommu_groups_bars_flr(lab2):
    with pf_loaded(lab2) as pf:
        groups_before = int(lab2.ssh(HOST, "ls /sys/kernel/iommu_groups | wc -l").stdout)
        secs = create(lab2, pf, TOTAL_VFS)
        print(f"\ncreating {TOTAL_VFS} VFs took {secs:.1f} s")
        assert vf_count(lab2, pf) == (TOTAL_VFS, TOTAL_VFS)
        out = sh(lab2, r"""
echo count $(nvf)
for vf in $(vfs); do echo vf $vf $(basename $(readlink /sys/bus/pci/devices/$vf/iommu_group)); done
echo pfgroup $(basename $(readlink $D/iommu_group))
echo groups $(ls /sys/kernel/iommu_groups | wc -l)
dmesg | grep -ci 'no space\|failed to assign\|can.t assign' || true
""").stdout
        lines = out.splitlines()
        assert f"count {TOTAL_VFS}" in lines, out
        vfl = [ln.split() for ln in lines if ln.startswith("vf ")]
        assert len(vfl) == TOTAL_VFS
        groups = {g for _, _, g in vfl}
        pfgroup = next(ln.split()[1] for ln in lines if ln.startswith("pfgroup"))
        assert len(groups) == TOTAL_VFS, "VFs share IOMMU groups"
        assert pfgroup not in groups
        assert f"groups {groups_before + TOTAL_VFS}" in lines, out
        assert lines[-1] == "0", "resource assignment failures in dmesg:\n" + out
        # All VFs on the PF's bus (ARI), none behind another bridge.
        bus = pf.rsplit(":", 1)[0]
        assert all(v.startswith(bus + ":") for _, v, _ in vfl)

        # BAR0 of every VF decodes: MAGIC, FUNC_INFO = VF | index, SCRATCH RW.
        rows = [ln.split() for ln in guest_py(lab2, "ident", pf).splitlines() if ln.strip()]
        assert len(rows) == TOTAL_VFS
        for idx, vf, magic, finfo, ok in rows:
            assert magic == "56465750", (vf, magic)
            assert int(finfo, 16) == (1 << 31) | int(idx), (vf, finfo)
            assert ok == "1", vf

        # VF capabilities: FLR, MSI-X with 4 vectors, ARI.
        vf0 = next(v for i, v, *_ in rows if i == "0")
        caps = lab2.ssh(HOST, f"lspci -vvv -s {vf0}").stdout
        assert re.search(r"DevCap:[^\n]*\n[^\n]*FLReset\+", caps), caps
        assert re.search(r"MSI-X: Enable. Count=8", caps), caps
        assert "Alternative Routing-ID Interpretation (ARI)" in caps, caps

        # FLR of VF0 clears its SCRATCH and no other function's.
        out = guest_py(lab2, "flr", pf)
        assert "before 1234abcd 0badcafe" in out, out
        assert re.search(r"methods .*\bflr\b", out), out
        assert "after 00000000 0badcafe" in out, out
        assert "magic 56465750" in out, out

        lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs", timeout=900)
        assert vf_count(lab2, pf) == (0, 0)
        assert int(lab2.ssh(HOST, "ls /sys/kernel/iommu_groups | wc -l").stdout) == groups_before
        assert qemu_alive(lab2)


# Binding all 128 VFs to vfio-pci takes ~75 s under TCG (vfio-pci probes and
# resets each VF); the default binds the first, a middle and the last VF.
BIND_ALL = os.environ.get("VFWARP_SRIOV_BIND_ALL") == "1"


def test_vfio_bind_blocks_disable_until_unbound(lab2):
    with pf_loaded(lab2) as pf:
        create(lab2, pf, TOTAL_VFS)
        lab2.ssh(HOST, "modprobe vfio-pci")
        pick = "" if BIND_ALL else "0 %d %d" % (TOTAL_VFS // 2, TOTAL_VFS - 1)
        t0 = time.monotonic()
        out = sh(lab2, f"""
pick="{pick}"
if [ -z "$pick" ]; then bind=$(vfs); else
  bind=$(for i in $pick; do basename $(readlink $D/virtfn$i); done); fi
for vf in $bind; do
  echo vfio-pci > /sys/bus/pci/devices/$vf/driver_override
  echo $vf > /sys/bus/pci/drivers_probe
done
for vf in $bind; do
  g=$(basename $(readlink /sys/bus/pci/devices/$vf/iommu_group))
  echo $vf $(basename $(readlink /sys/bus/pci/devices/$vf/driver)) $g $([ -c /dev/vfio/$g ] && echo dev)
done
""", timeout=900).stdout
        rows = [ln.split() for ln in out.splitlines() if ln.strip()]
        print(f"\nbinding {len(rows)} VFs to vfio-pci took {time.monotonic() - t0:.1f} s")
        assert len(rows) == (TOTAL_VFS if BIND_ALL else 3), out
        assert len({g for _, _, g, _ in rows}) == len(rows)
        for vf, drv, group, dev in rows:
            assert drv == "vfio-pci", (vf, drv)
            assert dev == "dev", f"/dev/vfio/{group} missing for {vf}"

        # Unbind all but one; disabling is still refused because of it.
        keep = rows[len(rows) // 2][0]
        others = " ".join(vf for vf, *_ in rows if vf != keep)
        sh(lab2, f"""
for vf in {others}; do
  echo > /sys/bus/pci/devices/$vf/driver_override
  echo $vf > /sys/bus/pci/drivers/vfio-pci/unbind
done
""")
        lab2.ssh(HOST, "dmesg -C")
        r = lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs", check=False)
        assert r.returncode != 0
        assert "Device or resource busy" in r.stderr, r.stderr
        assert vf_count(lab2, pf) == (TOTAL_VFS, TOTAL_VFS)
        log = lab2.ssh(HOST, "dmesg").stdout
        assert re.search(rf"cannot disable SR-IOV: VF \d+ \({re.escape(keep)}\) is in use "
                         r"\(driver vfio-pci\)", log), log
        assert "1 of 128 VFs in use" in log, log
        assert lab2.ssh(HOST, f"readlink /sys/bus/pci/devices/{keep}/driver").stdout.strip().endswith("vfio-pci")

        lab2.ssh(HOST, f"echo > /sys/bus/pci/devices/{keep}/driver_override; "
                       f"echo {keep} > /sys/bus/pci/drivers/vfio-pci/unbind")
        lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs", timeout=900)
        assert vf_count(lab2, pf) == (0, 0)
        left = [g for g in lab2.ssh(HOST, "ls /dev/vfio").stdout.split() if g.isdigit()]
        assert left == [], f"VFIO group devices left: {left}"
        assert qemu_alive(lab2)


def test_driver_removal_keeps_vfs_in_use_and_rebind_adopts_them(lab2):
    with pf_loaded(lab2) as pf:
        create(lab2, pf, 2)
        vf = lab2.ssh(HOST, f"basename $(readlink /sys/bus/pci/devices/{pf}/virtfn1)").stdout.strip()
        lab2.ssh(HOST, f"modprobe vfio-pci; echo vfio-pci > /sys/bus/pci/devices/{vf}/driver_override; "
                       f"echo {vf} > /sys/bus/pci/drivers_probe")
        lab2.ssh(HOST, "dmesg -C; rmmod vfwarp_pf")
        log = lab2.ssh(HOST, "dmesg").stdout
        assert "leaving 2 VFs enabled" in log, log
        assert "vfwarp_pf" not in lab2.ssh(HOST, "lsmod").stdout
        assert int(lab2.ssh(HOST, f"lspci -n -d {VF_ID} | wc -l").stdout) == 2
        lab2.ssh(HOST, f"echo > /sys/bus/pci/devices/{vf}/driver_override; "
                       f"echo {vf} > /sys/bus/pci/drivers/vfio-pci/unbind")
        lab2.ssh(HOST, f"insmod {PF_KO}")
        assert "adopting 2 VFs" in lab2.ssh(HOST, "dmesg").stdout
        lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs")
        assert vf_count(lab2, pf) == (0, 0)


def test_out_of_range_and_nonzero_change_refused(lab2):
    with pf_loaded(lab2) as pf:
        d = f"/sys/bus/pci/devices/{pf}"
        r = lab2.ssh(HOST, f"echo 129 > {d}/sriov_numvfs", check=False)
        assert r.returncode != 0 and "Numerical result out of range" in r.stderr, r.stderr
        assert vf_count(lab2, pf) == (0, 0)
        create(lab2, pf, 2)
        r = lab2.ssh(HOST, f"echo 3 > {d}/sriov_numvfs", check=False)
        assert r.returncode != 0 and "Device or resource busy" in r.stderr, r.stderr
        r = lab2.ssh(HOST, f"echo 129 > {d}/sriov_numvfs", check=False)
        assert r.returncode != 0
        assert vf_count(lab2, pf) == (2, 2)


def test_vf_driver_binds_vfs_and_checks_identity(lab2):
    require_modules(*VF_KOS)
    with pf_loaded(lab2) as pf:
        lab2.ssh(HOST, vf_load())
        create(lab2, pf, 4)
        out = sh(lab2, r"""
for vf in $(vfs); do echo $vf $(basename $(readlink /sys/bus/pci/devices/$vf/driver)); done
dmesg | grep -o 'vfwarp VF [0-9]*, hw interface v2\.' | sort
""").stdout.splitlines()
        drivers = [ln.split() for ln in out if ln.startswith("0000:")]
        assert len(drivers) == 4 and all(d == "vfwarp_vf" for _, d in drivers), out
        assert [ln for ln in out if ln.startswith("vfwarp VF")] == [
            f"vfwarp VF {i}, hw interface v2." for i in range(4)], out
        # The host's own VF driver does not hold the VFs: disable proceeds.
        lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs")
        assert vf_count(lab2, pf) == (0, 0)
        lab2.ssh(HOST, "rmmod vfwarp_rdma vfwarp_vf")


CYCLES = 10


def test_create_remove_128_repeatedly_without_leak(lab2):
    with pf_loaded(lab2) as pf:
        # One warm-up cycle so caches (slab, sysfs) reach their steady state.
        create(lab2, pf, TOTAL_VFS)
        lab2.ssh(HOST, f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs", timeout=900)
        # udevd works through the add/remove uevents after the fact; their
        # queued skbs count in SUnreclaim until it has, so settle first.
        snap = r"""udevadm settle -t 300; sync; echo 2 > /proc/sys/vm/drop_caches
echo $(ls /sys/kernel/iommu_groups | wc -l) $(awk '/^SUnreclaim:/{print $2}' /proc/meminfo) $(ls /sys/bus/pci/devices | wc -l)"""
        base = [int(x) for x in sh(lab2, snap).stdout.split()]
        t0 = time.monotonic()
        out = sh(lab2, f"""
for i in $(seq 1 {CYCLES}); do
  a=$(date +%s.%N)
  echo {TOTAL_VFS} > $D/sriov_numvfs || echo FAIL create $i
  b=$(date +%s.%N)
  up=$(nvf_sysfs); n=$(cat $D/sriov_numvfs)
  echo 0 > $D/sriov_numvfs || echo FAIL remove $i
  echo cycle $i $up $n $(nvf_sysfs) $(cat $D/sriov_numvfs) $a $b
done
""", timeout=3600).stdout
        wall = time.monotonic() - t0
        assert "FAIL" not in out, out
        cycles = [ln.split() for ln in out.splitlines() if ln.startswith("cycle ")]
        assert len(cycles) == CYCLES, out
        create_s = [float(c[7]) - float(c[6]) for c in cycles]
        print(f"\n{CYCLES} create/remove cycles of {TOTAL_VFS} VFs: {wall:.1f} s; "
              f"create {min(create_s):.1f}..{max(create_s):.1f} s each")
        for c in cycles:
            assert c[2:6] == [str(TOTAL_VFS), str(TOTAL_VFS), "0", "0"], c
        after = [int(x) for x in sh(lab2, snap).stdout.split()]
        assert after[0] == base[0], f"IOMMU groups {base[0]} -> {after[0]}"
        assert after[2] == base[2], f"PCI devices {base[2]} -> {after[2]}"
        # 10 x 128 leaked pci_devs (~2.5 KiB each, plus sysfs and groups)
        # would be several MiB; allow noise well below that.
        assert after[1] - base[1] < 2048, f"SUnreclaim {base[1]} -> {after[1]} KiB"
        assert qemu_alive(lab2)
