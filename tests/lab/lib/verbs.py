"""Verbs between the hosts' VFs (lib/vf.py's namespaces), shared by
test_verbs.py and test_verbs_faults.py: a command started in a VF's
namespace in the background, an rping between two VFs, the wait for an
rdma_cm server's listener, and the VF's ib_device and its objects in
`rdma res`.
"""
import re
import time

from .perftest import RPING_PORT
from .vf import addr, nsx
from .wait import wait_rdma_listener


def bg(lab, host, vf, cmd, log):
    """Start `cmd` in VF `vf`'s namespace in the background (bounded by
    timeout in cmd itself), output to `log` on the host."""
    lab.ssh(host, f"ip netns exec vf{vf} setsid {cmd} >{log} 2>&1 </dev/null &")


def rping_pair(lab, srv, cli, count=10):
    """rping server on srv=(host, vf), client on cli; returns client output."""
    sh, sv = srv
    ch, cv = cli
    ip = addr(sh, sv)
    log = f"/tmp/rping-s-{sv}.log"
    lab.ssh(sh, f"pkill -x rping; rm -f {log}", check=False)
    bg(lab, sh, sv, f"timeout 120 rping -s -a {ip} -C {count} -v", log)
    # a fixed second was not enough in CI on a host just powered back on: the
    # client's connect was refused (ECONNREFUSED) before the server listened
    wait_listen(lab, sh, sv, RPING_PORT, log, ip=ip)
    r = nsx(lab, ch, cv, f"timeout 120 rping -c -a {ip} -C {count} -v -V", check=False,
            timeout=180)
    srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    if r.returncode == 0:   # the server prints its last lines as it exits
        end = time.time() + 30
        while srv_out.count("server ping data: rdma-ping-") < count and time.time() < end:
            time.sleep(1)
            srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    assert r.returncode == 0, f"rping client failed ({r.returncode}):\n{r.stdout}\n{r.stderr}\n" \
                              f"server:\n{srv_out}\n{lab.ssh(ch, 'dmesg | tail -30').stdout}"
    assert len(re.findall(r"^ping data: rdma-ping-\d+", r.stdout, re.M)) == count, r.stdout
    assert srv_out.count("server ping data: rdma-ping-") == count, srv_out
    return r.stdout


def wait_listen(lab, host, vf, port, log, secs=30, ip=None):
    """Wait until the rdma_cm server in VF `vf`'s namespace listens (on `ip`
    when given): its listening cm_id shows in `rdma res` (the RNIC's TCP listen
    is in the adapter, invisible to the guest's ss)."""
    wait_rdma_listener(lambda cmd: lab.ssh(host, cmd, check=False), port, f"cat {log}",
                       secs=secs, ip=ip, what=f"{host} vf{vf}")


def ibdev_of(lab, host, vf):
    """The ib_device on VF `vf`'s netdev."""
    d = nsx(lab, host, vf, "ls /sys/class/net/vfeth/device/infiniband").stdout.split()
    assert len(d) == 1, d
    return d[0]


RES_KINDS = ("pd", "cq", "qp", "mr", "cm_id", "ctx")


def res_summary(out, dev):
    """`dev`'s line of `rdma res show` (one per device): ({kind: count}, line)."""
    m = re.search(rf"^\d+: {dev}: (.*)$", out, re.M)
    assert m, out
    counts = {k: int(v) for k, v in re.findall(r"\b(\w+) (\d+)\b", m.group(1))}
    assert set(RES_KINDS) <= set(counts), out
    return counts, m.group(0)


def res_counts(lab, host, dev):
    return res_summary(lab.ssh(host, "rdma res show").stdout, dev)
