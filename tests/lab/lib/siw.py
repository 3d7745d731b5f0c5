"""Linux siw (soft-iWARP) on the lab hosts, the software iWARP peer of the
vfwarp tests (test_siw.py: siw over each host's PF netdev; test_verbs_interop.py:
siw on a VF netdev facing vfwarp's RNIC). siw.ko is built by lab/build-siw.sh
(`make siw`) into build/guest/modules. Everything a test loads is undone:
siw links deleted, and every module loaded on the test's account unloaded
(siw, ib_core & co., vfwarp_pf, and what rdma-core's udev rules load when an
RDMA device appears, e.g. rpcrdma and ib_iser).
"""
import contextlib

from .pf import MODS, pf_up, require_modules
from .vf import HOSTS, unload_all

SIW = "siw0"
# lab/build-siw.sh builds two: Debian's source as is, the peer vfwarp's RNIC
# meets (interop, benchmark), and one with siw's accept fixed, for siw facing
# siw over the PF netdev (test_siw.py), where the fix's lost first FPDU is siw's
# own bug and not what the test is about.
SIW_KO = "siw.ko"
SIW_FIXED_KO = "siw-accept-fixed/siw.ko"


def siw_addr(host):
    """The address siw_over_pf gives `host`'s PF netdev: 10.79.0.0/24 (h1 .1,
    h2 .2), apart from the VF tests' 10.77 and the PF tests' 10.78."""
    return f"10.79.0.{int(host[1:])}"


def modules(lab, host):
    """The modules loaded on `host` (once udev has settled)."""
    out = lab.ssh(host, "udevadm settle -t 20 >/dev/null 2>&1; cat /proc/modules").stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


# siw's dependencies (modinfo: ib_core, ib_uverbs, libcrc32c) and the RDMA CM
# that rping and perftest -R use, then siw itself and one link over NETDEV.
# NS, if set, is the network namespace the netdev lives in: `rdma link add`
# looks the netdev up in the caller's namespace, and siw's TCP sockets are
# created in the namespace of the process that listens or connects.
SIW_UP = r"""
set -eu
modprobe -a ib_core ib_uverbs libcrc32c iw_cm rdma_cm rdma_ucm
modinfo -F depends %(mods)s/%(ko)s
[ "$(modinfo -F vermagic %(mods)s/%(ko)s | cut -d' ' -f1)" = "$(uname -r)" ]
insmod %(mods)s/%(ko)s
%(nsx)s rdma link add %(siw)s type siw netdev %(nd)s
rdma link show %(siw)s/1
ibv_devinfo -d %(siw)s
"""

SIW_DOWN = r"""
rdma link delete %(siw)s 2>/dev/null
[ -d /sys/module/siw ] && rmmod siw
true
"""

# Unload the modules named on the command line in whatever order their users
# allow (a bounded number of passes), then list what is still loaded.
UNLOAD = r"""
udevadm settle -t 20 >/dev/null 2>&1
for pass in 1 2 3 4 5 6 7 8 9 10; do
  left=""
  for m in "$@"; do
    [ -d /sys/module/$m ] || continue
    rmmod $m 2>/dev/null || left="$left $m"
  done
  [ -z "$left" ] && break
done
for m in "$@"; do grep -q "^$m " /proc/modules && echo "still loaded: $m"; done
true
"""


def siw_up(lab, host, netdev, ns=None, ko=SIW_KO):
    nsx = f"ip netns exec {ns}" if ns else ""
    out = lab.ssh(host, SIW_UP % {"mods": MODS, "ko": ko, "siw": SIW, "nd": netdev, "nsx": nsx},
                  timeout=300).stdout
    assert "state ACTIVE" in out and f"netdev {netdev}" in out, f"{host}: {out}"
    assert "iWARP" in out and "PORT_ACTIVE" in out, f"{host}: {out}"
    return out


def siw_down(lab, host):
    lab.ssh(host, SIW_DOWN % {"siw": SIW}, check=False, timeout=120)


def unload_new(lab, host, before):
    """Unload every module loaded since `before` (a modules() snapshot)."""
    new = sorted(modules(lab, host) - before)
    if new:
        out = lab.ssh(host, f"set -- {' '.join(new)}\n{UNLOAD}", check=False, timeout=300).stdout
        assert "still loaded" not in out, f"{host}: {out}"


@contextlib.contextmanager
def siw_over_pf(lab, hosts=HOSTS):
    """siw0 (siw with its accept fixed) on each host's PF netdev; everything
    undone afterwards."""
    require_modules("vfwarp_pf.ko", SIW_FIXED_KO, make="make modules siw")
    before = {h: modules(lab, h) for h in hosts}
    try:
        for h in hosts:
            nd = pf_up(lab, h, siw_addr(h))
            siw_up(lab, h, nd, ko=SIW_FIXED_KO)
        yield
    finally:
        for h in hosts:
            siw_down(lab, h)
        unload_all(lab, hosts)          # vfwarp_pf, as the PF/VF tests leave it
        for h in hosts:
            unload_new(lab, h, before[h])
        for h in hosts:
            assert modules(lab, h) == before[h], f"{h}: modules not as found"
