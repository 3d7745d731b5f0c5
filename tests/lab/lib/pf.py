"""The PF as every lab test finds, loads and unloads it: the adapter's PCI
ids, where the hosts see the modules `make modules` built, the PF's PCI
address as a shell expression, the check that the modules were built, and
the PF netdev loaded and up with an address (pf_up: test_pf_traffic.py,
lib/siw.py). Also the one list of the VF's modules and how they are loaded
and unloaded (VF_MODULES, vf_load, VF_UNLOAD). What a test does with the PF after loading it (VFs, QoS,
switchdev, the manager) stays with that test or lib/vf.py, lib/qos.py.
"""
from vfwarp_lab.paths import guest_share_dir

PF_ID = "1234:f0a0"
VF_ID = "1234:f0a1"
MODS = "/mnt/vfwarp/modules"        # build/guest/modules, as the hosts see it
PF_KO = f"{MODS}/vfwarp_pf.ko"
VF_KO = f"{MODS}/vfwarp_vf.ko"
RDMA_KO = f"{MODS}/vfwarp_rdma.ko"
# The VF's modules in load order: vfwarp_vf (the PCI function: netdev,
# mailbox, an RDMA auxiliary device per VF while its devlink enable_rdma is
# on; rdma=0 makes it off for new VFs) and vfwarp_rdma (the iWARP ib_device,
# bound to those auxiliary devices). Every lab test loads them with vf_load.
VF_MODULES = ("vfwarp_vf", "vfwarp_rdma")
VF_KOS = tuple(f"{m}.ko" for m in VF_MODULES)     # for require_modules
# Unload them (either order works: an ib_device goes with its aux device).
VF_UNLOAD = "rmmod vfwarp_rdma 2>/dev/null; rmmod vfwarp_vf 2>/dev/null"


def vf_load(args=""):
    """Shell: the RDMA core of the guest kernel, vfwarp_vf with module
    arguments `args`, then vfwarp_rdma."""
    return (f"modprobe -a ib_core ib_uverbs iw_cm rdma_cm && insmod {VF_KO} {args} && "
            f"insmod {RDMA_KO}")


def no_vfwarp_modules(lsmod):
    """True when `lsmod` (its output) lists neither the PF's module nor the VF's."""
    return not any(m in lsmod for m in ("vfwarp_pf",) + VF_MODULES)
# the PF's PCI address on a host (a shell expression): the adapter's first function
PF_BDF = "$(lspci -D -n -d %s | awk 'NR==1{print $1}')" % PF_ID


def require_modules(*names, make="make modules"):
    """The test fails at once unless each module of `names` was built (by
    `make`), rather than on the host with insmod's error."""
    for m in names:
        assert (guest_share_dir() / "modules" / m).exists(), f"no {m}: run '{make}' first"


# Load vfwarp_pf, give the PF netdev its address and wait for its carrier;
# prints the netdev's name last.
PF_UP = r"""
set -eu
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
insmod %(mods)s/vfwarp_pf.ko
udevadm settle -t 20 || true   # the netdev gets its final name first
for t in $(seq 100); do [ -d $D/net ] && break; sleep 0.1; done
nd=$(ls $D/net)
ip addr add %(addr)s/24 dev $nd
ip link set dev $nd up
for t in $(seq 50); do ip link show $nd | grep -q LOWER_UP && break; sleep 0.1; done
ip link show $nd | grep -q LOWER_UP || { ip link show $nd; exit 1; }
echo $nd
"""


def pf_up(lab, host, addr):
    """Load vfwarp_pf on `host`, give the PF netdev `addr`/24 and raise it;
    its name."""
    out = lab.ssh(host, PF_UP % {"pf": PF_ID, "mods": MODS, "addr": addr},
                  timeout=300).stdout.split()
    assert out, f"{host}: no PF netdev"
    return out[-1]
