"""Shared set-up of the VF lab tests: load vfwarp_pf and the VF's modules
(lib/pf.py VF_MODULES: vfwarp_vf, vfwarp_rdma) on the hosts, create VFs and put each VF netdev into its own network namespace
(vf0, vf1, ...) as `vfeth` with an address of 10.77.0.0/24 (h1: .11 .12,
h2: .21 .22), so traffic stays between lab hosts; undo it all afterwards,
also on failure. Plus small helpers to run commands in those namespaces.
"""
import contextlib
import re

from .pf import MODS, PF_BDF, PF_ID, VF_KOS, VF_UNLOAD, no_vfwarp_modules, require_modules, vf_load

HOSTS = ("h1", "h2")
NVF = 2


def addr(host, vf):
    return f"10.77.0.{int(host[1:]) * 10 + vf + 1}"


# The PF's modules, the RDMA core and the provider loaded, N VFs created
# (%(pf)s %(mods)s %(vf_load)s %(n)d); $D is the PF's sysfs directory.
# Shared by SETUP below and lib/soak.py's.
MODULES_UP = r"""
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
dmesg -C
# the RDMA core of the guest kernel (vfwarp_rdma registers an iWARP ib_device)
modprobe -a ib_core iw_cm ib_uverbs rdma_cm rdma_ucm
# the rdma-core provider, if built (lab/build-provider.sh)
if [ -x /mnt/vfwarp/rdma-core/install.sh ]; then /mnt/vfwarp/rdma-core/install.sh; fi
insmod %(mods)s/vfwarp_pf.ko
%(vf_load)s
echo %(n)d > $D/sriov_numvfs
"""

SETUP = r"""
set -eu
H=%(h)d""" + MODULES_UP + r"""udevadm settle -t 20 || true   # netdevs get their final names first
for i in $(seq 0 $((%(n)d - 1))); do
  vf=$(basename $(readlink $D/virtfn$i))
  for t in $(seq 100); do [ -d /sys/bus/pci/devices/$vf/net ] && break; sleep 0.1; done
  udevadm settle -t 20 || true
  nd=$(ls /sys/bus/pci/devices/$vf/net)
  ip netns add vf$i
  ip link set dev $nd netns vf$i
  ip -n vf$i link set dev $nd name vfeth
  ip -n vf$i addr add 10.77.0.$((H * 10 + i + 1))/24 dev vfeth
  ip -n vf$i link set lo up
  ip -n vf$i link set vfeth up
done
for i in $(seq 0 $((%(n)d - 1))); do
  for t in $(seq 50); do ip -n vf$i link show vfeth | grep -q LOWER_UP && break; sleep 0.1; done
  echo "vf$i $(ip -n vf$i -br link show vfeth)"
done
"""

CLEANUP = r"""
for i in $(seq 0 7); do ip netns del vf$i 2>/dev/null; done
%(vf_unload)s
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
[ -n "$PF" ] && [ -d /sys/module/vfwarp_pf ] && echo 0 > /sys/bus/pci/devices/$PF/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null
true
""" % {"pf": PF_ID, "vf_unload": VF_UNLOAD}


def unload_all(lab, hosts):
    """Namespaces, VFs and both modules gone from `hosts`, and checked."""
    for h in hosts:
        lab.ssh(h, CLEANUP, check=False, timeout=300)
    for h in hosts:
        mods = lab.ssh(h, "lsmod").stdout
        assert no_vfwarp_modules(mods), mods


def setup_host(lab, host, vf_args="", n=NVF):
    """vfwarp_pf + vfwarp_vf (module arguments vf_args) + vfwarp_rdma on `host`, n VFs,
    each VF netdev in its namespace with its address, links up."""
    out = lab.ssh(host, SETUP % {"h": int(host[1:]), "pf": PF_ID, "mods": MODS, "n": n,
                                 "vf_load": vf_load(vf_args)}, timeout=300).stdout
    assert out.count("LOWER_UP") == n, f"{host}: VF links not up:\n{out}"


@contextlib.contextmanager
def vfs_up(lab, hosts=HOSTS, vf_args=""):
    require_modules("vfwarp_pf.ko", *VF_KOS)
    try:
        for h in hosts:
            setup_host(lab, h, vf_args)
        yield
    finally:
        unload_all(lab, hosts)


def nsx(lab, host, vf, cmd, check=True, timeout=120):
    return lab.ssh(host, f"ip netns exec vf{vf} {cmd}", check=check, timeout=timeout)


def ping(lab, host, vf, dst, count=3, check=False):
    """Echo replies received of `count`, after one uncounted echo: right
    after a change (a VF's VLAN, a bridge, a mode) the first frame may be
    spent resolving the neighbour or on a link still settling; the count
    is of the steady state. The warm-up waits 1 s at most when nothing
    answers."""
    r = nsx(lab, host, vf, f"sh -c 'ping -c 1 -W 1 {dst} >/dev/null; "
                           f"ping -c {count} -i 0.3 -W 2 {dst}'", check=check)
    m = re.search(r"(\d+) received", r.stdout)
    return int(m.group(1)) if m else 0


def stats(lab, host, vf):
    out = nsx(lab, host, vf, "ethtool -S vfeth").stdout
    return {k: int(v) for k, v in re.findall(r"^\s+(\w+): (\d+)$", out, re.M)}


def rdma_counter(lab, host, vf, name):
    """Counter `name` of VF `vf`'s own ib_device (`rdma statistic`: the
    device's VFW_RSTAT_* registers, 32-bit wrapping)."""
    out = nsx(lab, host, vf, "sh -c 'rdma statistic show link "
                             "$(ls /sys/class/net/vfeth/device/infiniband)/1'").stdout
    m = re.search(rf"\b{name} (\d+)", out)
    assert m, f"no {name} counter in 'rdma statistic show':\n{out}"
    return int(m.group(1))


def pf_netdev(lab, host):
    return lab.ssh(host, f"ls /sys/bus/pci/devices/{PF_BDF}/net "
                         "2>/dev/null", check=False).stdout.strip()


RAW_SEND = r"""
import socket, sys
dst, src, n = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), int(sys.argv[3])
vid = int(sys.argv[4])
tag = b"\x81\x00" + vid.to_bytes(2, "big") if vid else b""
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("vfeth", 0))
for i in range(n):
    s.send(dst + src + tag + b"\x88\xb5" + bytes([i]) * 60)
"""


def raw_send(lab, host, vf, dst_mac, src_mac, count, vid=0):
    """Send `count` frames (local experimental ethertype, 802.1Q-tagged with
    `vid` if given) from VF `vf`'s netdev with any source MAC, bypassing the
    netdev's own address and VLAN devices."""
    hexmac = lambda m: m.replace(":", "")
    lab.ssh(host, f"cat > /tmp/rawsend.py <<'EOF'\n{RAW_SEND}\nEOF")
    nsx(lab, host, vf, f"python3 /tmp/rawsend.py {hexmac(dst_mac)} {hexmac(src_mac)} "
                       f"{count} {vid}")


def mac_of(lab, host, vf):
    return nsx(lab, host, vf, "cat /sys/class/net/vfeth/address").stdout.strip()
