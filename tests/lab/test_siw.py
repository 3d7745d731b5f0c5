"""Linux siw (soft-iWARP) between the two lab hosts: the software iWARP peer of
the vfwarp interop tests (issue 14).

Debian's kernel is built with "# CONFIG_RDMA_SIW is not set"; lab/build-siw.sh
builds siw.ko from the same kernel package's source (linux-source-6.12 of the
installed linux-image version) into build/guest/modules, which the hosts see
at /mnt/vfwarp/modules.

The only link between the hosts of lab2 is the adapter's uplink (each host's
management virtio-net is its own QEMU user network), so siw runs over the PF
netdev (vfwarp_pf) of each host: to the kernel a plain Ethernet netdev.
Addresses 10.79.0.0/24 (h1 .1, h2 .2), apart from the VF tests' 10.77 and the
PF tests' 10.78. The hosts are left as found, also on failure: siw links
deleted, and every module loaded on this test's account unloaded (siw,
ib_core & co., vfwarp_pf, and what rdma-core's udev rules load when an RDMA
device appears, e.g. rpcrdma and ib_iser).
"""
import re

import pytest

from lib.perftest import RPING_PORT, check_bw_lines, check_rping_data
from lib.siw import SIW, siw_addr, siw_over_pf
from lib.wait import eventually, server_log, start_server

ITERS = 100        # ib_write_bw iterations of 64 KiB (siw reaches ~1.4 MiB/s under TCG)


def serve(lab, host, cmd, port, log, secs=90):
    """Start an RDMA CM server in the background and wait until it listens
    (iWARP listens are real TCP listens); returns its pid."""
    return start_server(lab, host, cmd, port, log, secs, rdma=False)


def tcp_of(lab, hosts, port):
    """The TCP connections of `port` on `hosts` as ss shows them, any state:
    (host, state, Recv-Q, Send-Q, ss's line with its -i details)."""
    conns = []
    for h in hosts:
        out = lab.ssh(h, f"ss -tniH '( sport = :{port} or dport = :{port} )'", check=False).stdout
        # State Recv-Q Send-Q Local Peer, then a line of details (-i)
        lines = out.splitlines()
        for i, line in enumerate(lines):
            f = line.split()
            if len(f) > 4 and f[1].isdigit() and f[2].isdigit():
                more = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1][:1].isspace() else ""
                conns.append((h, f[0], int(f[1]), int(f[2]), f"{line.strip()} {more}"))
    return conns


def rping(lab, server, client, count=10):
    """rping between the two siw devices. A stall fails the test with both
    ends' sockets: Send-Q tells bytes the adapter has not delivered from a
    stall above TCP (unread bytes in a Recv-Q, every byte acked). Linux siw
    had such a stall, in its accept: the MPA reply left before the socket was
    the QP's, and a first FPDU arriving in between was never read (about one
    rping in three under load: the server's Recv-Q held the client's 40-byte
    first SEND, every byte acked): this test loads the build with the fix
    (lib/siw.py SIW_FIXED_KO, lab/build-siw.sh), vfwarp's interop tests
    Debian's source as is."""
    a = siw_addr(server)
    clog = "/tmp/rping-c.log"

    def log():
        return lab.ssh(client, f"cat {clog}", check=False).stdout

    pid = serve(lab, server, f"rping -s -a {a} -C {count} -v", RPING_PORT,
                "/tmp/rping-s.log", secs=60)
    lab.ssh(client, f"rm -f {clog}; setsid sh -c 'timeout 60 rping -c -a {a} "
                    f"-C {count} -v -V; echo rc=$?' >{clog} 2>&1 </dev/null &")
    if not eventually(lambda: "rc=" in log(), secs=30):
        conns = tcp_of(lab, (server, client), RPING_PORT)
        lab.ssh(client, "pkill -x rping", check=False)
        lab.ssh(server, f"kill {pid}", check=False)
        pytest.fail(f"rping {client} -> {server} stalled 30 s; its sockets "
                    "(host: state Recv-Q Send-Q ...):\n"
                    + "\n".join(f"  {c[0]}: {c[4]}" for c in conns)
                    + f"\nclient:\n{log()}")
    out = log()
    rc = int(re.search(r"^rc=(\d+)$", out, re.M).group(1))
    s = server_log(lab, server, pid, "/tmp/rping-s.log")
    print(f"\nrping {client} -> {server} (siw):\n{out}server:\n{s}")
    assert rc == 0, f"rping client failed ({rc}):\n{out}"
    check_rping_data(out, s, count)


def test_siw_link_over_the_pf_netdev_and_rping_both_ways(lab2):
    with siw_over_pf(lab2):
        rping(lab2, "h2", "h1")
        rping(lab2, "h1", "h2")


def test_ib_write_bw_rdma_cm_over_siw(lab2):
    with siw_over_pf(lab2):
        bw = f"ib_write_bw -R -d {SIW} -n {ITERS} -s 65536"
        pid = serve(lab2, "h1", bw, 18515, "/tmp/bw-s.log")
        r = lab2.ssh("h2", f"timeout 90 {bw} {siw_addr('h1')}", check=False, timeout=150)
        s = server_log(lab2, "h1", pid, "/tmp/bw-s.log")
        print(f"\nib_write_bw -R h2 -> h1 (siw):\n{r.stdout}server:\n{s}")
        assert r.returncode == 0, f"ib_write_bw client failed:\n{r.stdout}{r.stderr}"
        assert "Transport type : IW" in r.stdout, r.stdout
        check_bw_lines((r.stdout, s), ITERS)
