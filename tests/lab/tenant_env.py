"""Shared set-up of the tenant-VM lab tests: each host with vfwarp_pf and
NVF VFs left on the host (bound to vfwarp_vf, no namespaces: libvirt takes
them from there), its libvirt prepared for tenants (lab/vfwarp_lab/
tenants.py), and one tenant VM per host booted once and shared by the tests
of a module. Undone afterwards, also on failure.
"""
import contextlib
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from vf_env import MODS, PF_ID, require_modules

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))
from vfwarp_lab.tenants import Tenants  # noqa: E402

NVF = 4
VF_ID = "1234:f0a1"

SETUP = r"""
set -eu
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
modprobe -a ib_core iw_cm ib_uverbs rdma_cm rdma_ucm
insmod %(mods)s/vfwarp_pf.ko
insmod %(mods)s/vfwarp_vf.ko
echo %(n)d > $D/sriov_numvfs
udevadm settle -t 20 || true
ip link set dev $(ls $D/net) up
echo "$PF $(ls $D/net)"
"""

CLEANUP = r"""
for d in $(virsh -q -c qemu:///system list --all --name); do
  virsh -q -c qemu:///system destroy $d; virsh -q -c qemu:///system undefine $d
done >/dev/null 2>&1
for n in $(virsh -q -c qemu:///system net-list --all --name | grep '^vfwarp-pool'); do
  virsh -q -c qemu:///system net-destroy $n; virsh -q -c qemu:///system net-undefine $n
done >/dev/null 2>&1
rmmod vfwarp_vf 2>/dev/null
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
[ -n "$PF" ] && [ -d /sys/module/vfwarp_pf ] && echo 0 > /sys/bus/pci/devices/$PF/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null
true
""" % {"pf": PF_ID}


class Host:
    """What a test needs of a host: its PF and VFs by PCI address."""

    def __init__(self, name, pf_bdf, pf_netdev):
        self.name, self.pf, self.pf_netdev = name, pf_bdf, pf_netdev

    def vf(self, lab, i):
        link = lab.ssh(self.name, f"readlink /sys/bus/pci/devices/{self.pf}/virtfn{i}").stdout
        return link.strip().rsplit("/", 1)[-1]


def setup_host(lab, name):
    """vfwarp_pf + vfwarp_vf and NVF VFs; a lab reused for development may
    have them already (VFs in tenants that are kept running)."""
    have = lab.ssh(name, "cat /sys/bus/pci/devices/$(lspci -D -n -d %s | awk 'NR==1{print $1}')"
                         "/sriov_numvfs" % PF_ID, check=False).stdout.strip()
    if have == str(NVF):
        out = lab.ssh(name, "PF=$(lspci -D -n -d %s | awk 'NR==1{print $1}'); "
                            "echo $PF $(ls /sys/bus/pci/devices/$PF/net)" % PF_ID).stdout
        pf, netdev = out.split()[-2:]
        return Host(name, pf, netdev)
    out = lab.ssh(name, SETUP % {"pf": PF_ID, "mods": MODS, "n": NVF}, timeout=300).stdout
    pf, netdev = out.split()[-2:]
    return Host(name, pf, netdev)


def pool_name(host_info):
    """The VF pool network of a host's PF."""
    return f"vfwarp-pool-{host_info.pf_netdev}"


@contextlib.contextmanager
def tenant_lab(lab, hosts=("h1", "h2"), pool_at_start=None):
    """Yields (Tenants, {host: Host}) with one tenant booted per host:
    t1 on h1, t2 on h2, no VF yet; except `pool_at_start` {host: xml}, a
    tenant defined with that interface of its host's pool network (the
    pool is made first), so it starts with a VF the pool chose."""
    require_modules()
    ten = Tenants(lab)
    pool_at_start = pool_at_start or {}
    reuse = bool(os.environ.get("VFWARP_LAB_REUSE"))
    names = [(h, f"t{h[1:]}", 0) for h in hosts]
    try:
        info = {h: setup_host(lab, h) for h in hosts}
        boot = []
        for h, t, slot in names:
            ten.prepare_host(h)
            running = reuse and \
                ten.virsh(h, f"domstate {t}", check=False).stdout.strip() == "running"
            keep = _mac_of(pool_at_start[h]) if h in pool_at_start else None
            if h in pool_at_start:
                ten.ensure_pool_network(h, pool_name(info[h]), info[h].pf_netdev)
            if running and (keep is None or any(_mac_of(x) == keep
                                                for x in ten.vf_devices(h, t))):
                ten.adopt(h, t, slot)
                for xml in ten.vf_devices(h, t):     # what an earlier run left attached
                    if keep is None or _mac_of(xml) != keep:
                        ten.detach(h, t, xml)
            elif h in pool_at_start:
                boot.append((h, t, slot, (pool_at_start[h],)))
            else:
                boot.append((h, t, slot))
        ten.start_many(boot)
        yield ten, info
    finally:
        ten.close()
        if not reuse:
            for h in hosts:
                lab.ssh(h, CLEANUP, check=False, timeout=300)


def _mac_of(xml):
    m = ET.fromstring(xml).find("mac")
    return None if m is None else m.get("address")


def vf_netdev(ten, tenant, mac=None):
    """Name of the vfwarp_vf netdev in a tenant ('' when none; one per line
    when several), or only the one with MAC `mac`."""
    match = f'&& [ "$(cat $n/address)" = "{mac}" ] ' if mac else ""
    return ten.ssh(tenant, "for n in /sys/class/net/*; do "
                           "[ \"$(basename $(readlink -f $n/device/driver) 2>/dev/null)\" = vfwarp_vf ] "
                           f"{match}&& basename $n; done; true").stdout.strip()


def host_vf_line(lab, host, pf_netdev, i):
    """`ip link show PF` line of VF i."""
    out = lab.ssh(host, f"ip link show {pf_netdev}").stdout
    m = re.search(rf"^\s+vf {i} .*$", out, re.M)
    return m.group(0) if m else ""
