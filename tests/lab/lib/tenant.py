"""What the tenant-VM lab tests (test_tenants.py) need of the provisioned
hosts (lib/provisioned.py: site.yml left each host with vfwarp_pf, 8 VFs, the
inventory's tenants and a tenant VM, t1 on h1 and t2 on h2, holding VF 0 of
tenant red's pool network): each host's PF and VFs by PCI address, the tenant
VMs reached by ssh through their host (lab/vfwarp_lab/tenants.py), and reads
of the VF netdevs inside them.
"""
import re

from vfwarp_lab.tenants import Tenants  # noqa: F401 (the tests' handle on the VMs)

from .pf import PF_BDF


class Host:
    """What a test needs of a host: its PF and VFs by PCI address."""

    def __init__(self, lab, name):
        out = lab.ssh(name, f"PF={PF_BDF}; "
                            "echo $PF $(ls /sys/bus/pci/devices/$PF/net)").stdout
        self.name = name
        self.pf, self.pf_netdev = out.split()[-2:]

    def vf(self, lab, i):
        link = lab.ssh(self.name, f"readlink /sys/bus/pci/devices/{self.pf}/virtfn{i}").stdout
        return link.strip().rsplit("/", 1)[-1]


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
