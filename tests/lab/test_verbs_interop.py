"""Interop of vfwarp's iWARP verbs with Linux siw (soft-iWARP), issue 14:
h1 runs rping / ib_write_bw -R on its VF0 (vfwarp_rdma's ib_device, the
adapter's RNIC; 10.77.0.11 in namespace vf0); h2 runs the other side over
siw on h2's VF0 netdev (10.77.0.21 in namespace vf0), with vfwarp_vf loaded
as rdma=0 there (no RDMA auxiliary device, so vfwarp_rdma binds nothing) so
the VF is a plain netdev and rdma_cm picks siw. The frames
go h1 VF0 -> h1's embedded switch -> uplink wire -> h2's switch -> h2 VF0, so
the adapter's MPA/DDP/RDMAP has to agree with the kernel's siw on the wire,
both as connection initiator and as responder.

siw as responder installs the socket upcall that reads the stream only after
its MPA Reply has gone out (siw_accept); the adapter, answering within
microseconds, sent its RTR into that window and siw never read it (rping
stalled). The device now holds its first FPDU 20 ms after the Reply.

Everything is undone afterwards, also on failure: siw link, namespaces, VFs,
and every module loaded on this test's account (lib/siw.py).
"""
import contextlib
import re

import pytest

from lib.perftest import BW_LINE, PERF_PORT, RPING_PORT, check_bw_lines, check_rping_data
from lib.pf import MODS, VF_KOS, require_modules
from lib.siw import SIW, SIW_KO, SIW_UP, modules, siw_down, unload_new
from lib.vf import addr, nsx, unload_all, vfs_up
from lib.wait import server_log, start_server

# tools/lab-tier's `provisioned` session, on bare hosts before site.yml runs:
# it evens the two sessions out (tools/lab-tier says how they were weighed)
pytestmark = pytest.mark.before_site

SIW_IP = addr("h2", 0)
VF_IP = addr("h1", 0)
ITERS = 100

@contextlib.contextmanager
def siw_peer(lab):
    """h1: VFs with vfwarp; h2: VFs as plain netdevs (rdma=0), siw0 on VF0."""
    require_modules("vfwarp_pf.ko", *VF_KOS, SIW_KO, make="make modules siw")
    before = modules(lab, "h2")
    try:
        with vfs_up(lab, ("h1",)), vfs_up(lab, ("h2",), vf_args="rdma=0"):
            assert not lab.ssh("h2", "ls /sys/class/infiniband", check=False).stdout.strip()
            out = lab.ssh("h2", SIW_UP % {"mods": MODS, "ko": SIW_KO, "siw": SIW, "nd": "vfeth",
                                          "nsx": "ip netns exec vf0"}, timeout=300).stdout
            assert "state ACTIVE" in out and "iWARP" in out and "PORT_ACTIVE" in out, out
            # the netdev shows only from its own namespace
            link = lab.ssh("h2", f"ip netns exec vf0 rdma link show {SIW}/1").stdout
            assert "netdev vfeth" in link, link
            # the wire path, before any RDMA
            r = nsx(lab, "h1", 0, f"ping -c 3 -i 0.3 -W 2 {SIW_IP}", check=False)
            assert re.search(r"[1-3] received", r.stdout), r.stdout
            try:
                yield
            finally:
                siw_down(lab, "h2")
    finally:
        unload_all(lab, ("h2",))
        unload_new(lab, "h2", before)
        assert modules(lab, "h2") == before, "h2: modules not as found"


@pytest.fixture(scope="module")
def peer(lab2):
    with siw_peer(lab2):
        yield lab2


def run_in(lab, side, cmd, **kw):
    """side: "vf" (h1 VF0, vfwarp) or "siw" (h2 VF0, siw)."""
    host, ns = ("h1", "vf0") if side == "vf" else ("h2", "vf0")
    return lab.ssh(host, f"ip netns exec {ns} {cmd}", **kw)


def serve(lab, side, cmd, port, log, secs=150):
    """Start an RDMA CM server in `side`'s namespace in the background and
    wait until it listens; returns (host, pid)."""
    host, ns = ("h1", "vf0") if side == "vf" else ("h2", "vf0")
    return host, start_server(lab, host, cmd, port, log, secs, ns=ns)


def diag(lab):
    return "\nh1 dmesg:\n" + lab.ssh("h1", "dmesg | tail -25", check=False).stdout + \
           "\nh2 dmesg:\n" + lab.ssh("h2", "dmesg | tail -25", check=False).stdout


def rping(lab, server, count=20):
    client = "siw" if server == "vf" else "vf"
    ip = VF_IP if server == "vf" else SIW_IP
    host, pid = serve(lab, server, f"rping -s -a {ip} -C {count} -v", RPING_PORT, "/tmp/rping-s.log")
    r = run_in(lab, client, f"timeout 120 rping -c -a {ip} -C {count} -v -V",
               check=False, timeout=180)
    s = server_log(lab, host, pid, "/tmp/rping-s.log", secs=60)
    print(f"\nrping client {client} -> server {server}: {len(r.stdout.splitlines())} lines")
    assert r.returncode == 0, f"rping client ({client}) failed ({r.returncode}):\n" \
                              f"{r.stdout}{r.stderr}\nserver:\n{s}{diag(lab)}"
    check_rping_data(r.stdout, s, count)


def write_bw(lab, server):
    client = "siw" if server == "vf" else "vf"
    ip = VF_IP if server == "vf" else SIW_IP
    dev = lambda side: f"-d {SIW}" if side == "siw" else ""
    bw = f"ib_write_bw -R -F -n {ITERS} -s 65536"
    host, pid = serve(lab, server, f"{bw} {dev(server)}", PERF_PORT, "/tmp/bw-s.log")
    r = run_in(lab, client, f"timeout 150 {bw} {dev(client)} {ip}", check=False, timeout=200)
    s = server_log(lab, host, pid, "/tmp/bw-s.log", secs=60)
    assert r.returncode == 0, f"ib_write_bw client ({client}) failed ({r.returncode}):\n" \
                              f"{r.stdout}{r.stderr}\nserver:\n{s}{diag(lab)}"
    assert "Transport type : IW" in r.stdout, r.stdout
    check_bw_lines((r.stdout, s), ITERS)
    m = BW_LINE.search(r.stdout)
    print(f"\nib_write_bw -R 64 KiB x {ITERS}, client {client} -> server {server}: "
          f"{m.group(3)} MiB/s")


def test_rping_vfwarp_client_siw_server(peer):
    rping(peer, server="siw")


def test_rping_siw_client_vfwarp_server(peer):
    rping(peer, server="vf")


def test_ib_write_bw_vfwarp_client_siw_server(peer):
    write_bw(peer, server="siw")


def test_ib_write_bw_siw_client_vfwarp_server(peer):
    write_bw(peer, server="vf")
