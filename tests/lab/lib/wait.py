"""Waiting on what the lab hosts do asynchronously: eventually(), and a
server started in the background until it listens (rdma_cm's listening
cm_id for vfwarp, a TCP socket for siw's rdma_cm and iperf3).
"""
import re
import time

import pytest


def eventually(check, secs=20, every=0.3):
    """check() until it returns true, `secs` at most; its last value. For
    what the hosts do asynchronously (a mailbox request the PF serves, a
    carrier change): a fixed pause is too short when the other lab session
    loads the machine and too long when it does not."""
    end = time.monotonic() + secs
    while True:
        got = check()
        if got or time.monotonic() > end:
            return got
        time.sleep(every)


def wait_rdma_listener(run, port, log_cmd, secs=30, ip=None, what="the server"):
    """Wait until an rdma_cm server listens on `port` (on `ip` when given):
    its listening cm_id shows in `rdma res` (vfwarp's TCP listen is in the
    adapter, invisible to the machine's ss). A client started before that is
    refused (RDMA_CM_EVENT_REJECTED, -111), and how long a server takes to get
    there depends on the load (a tenant VM under nested TCG beside the other
    lab session: over 3 s). `run(cmd)` runs a shell command where the server
    runs and returns its CompletedProcess; on timeout the test fails with the
    output of `log_cmd` (the server's log)."""
    src = re.escape(ip) if ip else r"\S+"
    listening = re.compile(rf"state LISTEN .* src-addr {src}:{port}\b")
    wait_for_listener(run, "rdma res show cm_id", listening.search, port, log_cmd, secs, what)


def wait_tcp_listener(run, port, log_cmd, secs=30, what="the server"):
    """Like wait_rdma_listener for a server on the machine's own TCP (iperf3,
    siw's rdma_cm): its socket shows in `ss -ltn` (run it in the server's
    network namespace)."""
    wait_for_listener(run, f"ss -ltnH 'sport = :{port}'", str.strip, port, log_cmd, secs, what)


def start_server(lab, host, cmd, port, log, secs, ns=None, rdma=True):
    """Start server `cmd` on `host` in the background (in network namespace
    `ns` when given), bounded by `secs`, its output to `log`; return its pid
    once it listens on `port`: an rdma_cm listener (`rdma`, vfwarp's is in
    the adapter) or a TCP socket of the host's own stack (siw's). If it does
    not listen, it is killed and the test fails with its log."""
    inns = f"ip netns exec {ns} " if ns else ""
    pid = lab.ssh(host, f"{inns}setsid timeout {secs} {cmd} >{log} 2>&1 </dev/null & "
                        "echo $!").stdout.strip()
    try:
        if rdma:
            wait_rdma_listener(lambda c: lab.ssh(host, c, check=False), port, f"cat {log}",
                               what=f"{host}: {cmd}")
        else:
            wait_tcp_listener(lambda c: lab.ssh(host, inns + c, check=False), port,
                              f"cat {log}", what=f"{host}: {cmd}")
    except BaseException:
        lab.ssh(host, f"kill {pid}", check=False)
        raise
    return pid


def wait_for_listener(run, probe, listening, port, log_cmd, secs, what):
    if not eventually(lambda: listening(run(probe).stdout), secs):
        pytest.fail(f"{what} does not listen on {port} after {secs} s:\n" + run(log_cmd).stdout)


def server_log(lab, host, pid, log, secs=20):
    """Wait for the server to exit by itself (killed after `secs`); its output."""
    end = time.time() + secs
    while time.time() < end:
        if lab.ssh(host, f"kill -0 {pid} 2>/dev/null", check=False).returncode:
            break
        time.sleep(0.2)
    else:
        lab.ssh(host, f"kill {pid}", check=False)
        pytest.fail(f"{host}: server {pid} did not exit:\n"
                    + lab.ssh(host, f"cat {log}", check=False).stdout)
    return lab.ssh(host, f"cat {log}").stdout
