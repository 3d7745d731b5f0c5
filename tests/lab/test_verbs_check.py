"""Data integrity and memory protection of iWARP verbs over VFs (issue 14),
with tools/verbs/vfw_verbs_check (built by lab/build-tools.sh into
/mnt/vfwarp/tools): seeded data by SEND/RECV, RDMA WRITE and READ at 11 sizes
(1 B .. 4 MiB, aligned and unaligned offsets), every byte checked on the
receiving side; forbidden WRITEs and READs (foreign STag, deregistered STag,
out of bounds, missing right) must fail the RFC's way with the target memory
unchanged; and a second process ringing the SQ doorbell of the client's QP
through its own doorbell page must be refused (db_refused grows).

Server and client run in the VFs' namespaces (lib/vf.py), each bounded by
timeout; the hosts and VFs are set up once for the module.
"""
import re
import time

import pytest

from lib.vf import addr, nsx, rdma_counter, vfs_up
from vfwarp_lab.paths import guest_share_dir

TOOL = "/mnt/vfwarp/tools/vfw_verbs_check"
N_DATA = 3 * 11 * 2      # SEND/WRITE/READ x sizes x {aligned, unaligned}
N_PROT = 2 * 5           # WRITE/READ x protection kinds
RUN_SECS = 1200          # whole run, generous for TCG


@pytest.fixture(scope="module")
def vcheck(lab2):
    assert (guest_share_dir() / "tools" / "vfw_verbs_check").exists(), \
        "run 'make tools' (lab/build-tools.sh) first"
    with vfs_up(lab2):
        yield lab2


def db_refused(lab, host, vf):
    return rdma_counter(lab, host, vf, "db_refused")


def run_check(lab, srv, cli, port, seed, doorbell=True):
    sh, sv = srv
    ch, cv = cli
    ip = addr(sh, sv)
    log = f"/tmp/vfw-verbs-check-s{port}.log"
    pidf = f"/tmp/vfw-verbs-check-s{port}.pid"
    lab.ssh(sh, f"rm -f {log}")
    # timeout (exec'd by setsid) is $!; it passes a TERM on to the server
    lab.ssh(sh, f"ip netns exec vf{sv} setsid timeout {RUN_SECS + 60} {TOOL} -s {ip} -p {port} "
                f"-S {seed} -T 300 >{log} 2>&1 </dev/null & echo $! >{pidf}")
    try:
        return _run_client(lab, srv, cli, port, seed, doorbell, log)
    finally:
        # a server left over from a failed run would keep the VF's device busy
        lab.ssh(sh, f"kill $(cat {pidf}) 2>/dev/null; rm -f {pidf}", check=False)


def _run_client(lab, srv, cli, port, seed, doorbell, log):
    sh, sv = srv
    ch, cv = cli
    ip = addr(sh, sv)
    end = time.time() + 60
    srv_out = ""
    while "listening" not in srv_out and time.time() < end:
        time.sleep(1)
        srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    assert "listening" in srv_out, f"server did not start:\n{srv_out}"

    before = db_refused(lab, ch, cv) if doorbell else 0
    t0 = time.time()
    r = nsx(lab, ch, cv, f"timeout {RUN_SECS} {TOOL} -c {ip} -p {port} -S {seed}"
                         f"{' -D' if doorbell else ''}", check=False, timeout=RUN_SECS + 60)
    secs = time.time() - t0
    end = time.time() + 30
    while "server: done" not in srv_out and time.time() < end:
        time.sleep(1)
        srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    print(f"\n--- client {ch} VF{cv} -> server {sh} VF{sv} ({secs:.0f} s)\n{r.stdout}")
    diag = f"client exit {r.returncode}\n{r.stdout}\n{r.stderr}\nserver:\n{srv_out}\n" \
           f"{lab.ssh(ch, 'dmesg | tail -20', check=False).stdout}"
    assert r.returncode == 0, diag
    want = N_DATA + N_PROT + (1 if doorbell else 0)
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (want, 0), diag
    assert len(re.findall(r"^PASS ", r.stdout, re.M)) == want, diag
    assert not re.search(r"^FAIL ", r.stdout, re.M), diag
    for size in (1, 4097, (1 << 20) + 13, 4 << 20):
        for op in ("send", "write", "read"):
            assert re.search(rf"^PASS {op} {size} unaligned$", r.stdout, re.M), diag
    for op in ("write", "read"):
        for kind in ("foreign-stag", "deregistered-stag", "oob-crossing-end",
                     "oob-beyond-end", "missing-right"):
            line = re.search(rf"^PASS prot {op} {kind} \((.*)\)$", r.stdout, re.M)
            assert line and "QP ERROR" in line.group(1) and \
                "target unchanged" in line.group(1), diag
            if op == "read":
                assert "READ remote access error" in line.group(1), diag
    assert "server: done" in srv_out, diag
    if doorbell:
        after = db_refused(lab, ch, cv)
        assert after > before, f"rdma statistic db_refused {before} -> {after}\n{diag}"
        print(f"rdma statistic db_refused on {ch} VF{cv}: {before} -> {after}")
    return r.stdout


def test_verbs_check_across_hosts(vcheck):
    run_check(vcheck, ("h2", 0), ("h1", 0), port=7471, seed=1414)


def test_verbs_check_between_vfs_of_one_host(vcheck):
    # the RDMA frames hairpin in h1's embedded switch
    run_check(vcheck, ("h1", 1), ("h1", 0), port=7472, seed=2718)
