"""Batching (batch.py): consecutive `ip` / `devlink` commands in one
`TOOL -batch -` process, with iproute2's failure report mapped back to the
command (and so the step) that failed. Against qosdevice.py (its batch
mode follows iproute2's batch(): stop at the first failing line, print
"Command failed -:N"; the real `ip -batch` is run in test_transaction.py's
veth tests and on the lab host), and the 128-VF / 32-tenant files of
bench/policy_bench.py."""
import copy
import io
import json
import sys
from pathlib import Path

import pytest

from qosdevice import DEV, PF, QosDevice, Refused
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.txn import batch
from vfwarp_manager.layers.actions import argv_action, write_action
from vfwarp_manager.layers.rate import leaf_action
from vfwarp_manager.runner import Replay, Result, ToolError

TOP = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(TOP / "bench"))
import policy_bench  # noqa: E402


def vf_set(n, *args):
    return argv_action(["ip", "link", "set", "dev", PF, "vf", n, *args])


class Counting(QosDevice):
    """The stand-in, noting every process started."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.processes, self._in_batch = [], False

    def run(self, argv, stdin=None):
        if self._in_batch:              # a line of a batch: no process of its own
            return super().run(argv)
        self.processes.append(tuple(str(a) for a in argv))
        self._in_batch = stdin is not None
        try:
            return super().run(argv, stdin)
        finally:
            self._in_batch = False


def test_batch_key_groups_plain_ip_and_devlink_commands_only():
    assert batch.batch_key(vf_set(0, "max_tx_rate", 5)) == ("ip", ())
    assert batch.batch_key(argv_action(["ip", "-n", "ns1", "link", "set", "dev", "va", "mtu", 1400])) \
        == ("ip", ("-n", "ns1"))
    assert batch.batch_key(leaf_action(DEV, 3, {"tx_weight": 2})) == ("devlink", ())
    # not batched: other tools, options that are not a netns, sysfs, the
    # eswitch mode (renumbers the ports), and anything iproute2's batch
    # reader would split or treat as syntax
    for a in (argv_action(["dcb", "ets", "set", "dev", PF, "tc-bw", "0:100"]),
              argv_action(["ip", "-j", "link", "show"]),
              argv_action(["ip", "-n"]),
              write_action("/sys/x", 3),
              argv_action(["devlink", "dev", "eswitch", "set", DEV, "mode", "switchdev"]),
              argv_action(["ip", "link", "set", "dev", "va", "alias", "two words"]),
              argv_action(["ip", "link", "set", "dev", "va", "alias", "#x"]),
              argv_action(["ip", "link", "set", "dev", "va", "alias", "it's"]),
              argv_action(["ip", "link", "set", "dev", "va", "alias", "a\\b"])):
        assert batch.batch_key(a) is None, a


def test_one_process_for_a_run_and_a_refusal_names_its_command_the_rest_not_run():
    dev = Counting(numvfs=4)
    acts = [vf_set(0, "min_tx_rate", 0, "max_tx_rate", 10),
            vf_set(1, "min_tx_rate", 20, "max_tx_rate", 10),       # refused: share above cap
            vf_set(2, "min_tx_rate", 0, "max_tx_rate", 30)]
    errs = batch.run_actions(dev, acts)
    assert dev.processes == [("ip", "-batch", "-")]
    ((i, e),) = errs
    assert i == 1 and isinstance(e, ToolError)
    assert "vf 1 min_tx_rate 20" in str(e) and "share above" in str(e) and "Command failed" not in str(e)
    assert [dev.st["vfs"][n]["max"] for n in range(3)] == [10, 0, 0]


def test_keep_going_runs_every_line_and_reports_each_failure():
    dev = Counting(numvfs=4)
    acts = [vf_set(0, "min_tx_rate", 30, "max_tx_rate", 10),
            vf_set(1, "min_tx_rate", 0, "max_tx_rate", 10),
            vf_set(2, "min_tx_rate", 40, "max_tx_rate", 10),
            vf_set(3, "min_tx_rate", 0, "max_tx_rate", 30)]
    errs = batch.run_actions(dev, acts, keep_going=True)
    assert dev.processes == [("ip", "-force", "-batch", "-")]
    assert [i for i, _ in errs] == [0, 2]
    assert [dev.st["vfs"][n]["max"] for n in range(4)] == [0, 10, 0, 30]


def test_a_failure_naming_no_line_is_charged_to_the_last_command():
    lines = "link set dev enp1s0 vf 0 trust on\nlink set dev enp1s0 vf 1 trust on\n"
    r = Replay({("ip", "-batch", "-", lines): Result((), 1, "", "Cannot open netlink socket\n")})
    errs = batch.run_actions(r, [vf_set(0, "trust", "on"), vf_set(1, "trust", "on")])
    ((i, e),) = errs
    assert i == 1 and "without naming a line" in str(e) and "netlink socket" in str(e)


def test_tools_alternate_in_order_and_odd_arguments_run_alone():
    r = Replay({("ip", "-batch", "-", "link set dev enp1s0 vf 0 trust on\n"
                 "link set dev enp1s0 vf 1 trust on\n"): Result((), 0, "", ""),
                ("ip", "link", "set", "dev", "enp1s0", "alias", "a b"): Result((), 0, "", ""),
                ("devlink", "dev", "param", "set", DEV, "name", "x", "value", "1", "cmode",
                 "runtime"): Result((), 0, "", "")})
    assert batch.run_actions(r, [vf_set(0, "trust", "on"), vf_set(1, "trust", "on"),
                                 argv_action(["ip", "link", "set", "dev", PF, "alias", "a b"]),
                                 argv_action(["devlink", "dev", "param", "set", DEV, "name", "x",
                                              "value", 1, "cmode", "runtime"])]) == []
    assert [c[:3] for c in r.calls] == [("ip", "-batch", "-"), ("ip", "link", "set"),
                                        ("devlink", "dev", "param")]


def with_node():
    dev = Counting(numvfs=8)
    dev.st["nodes"]["vfw-a"] = {"tx_share": 0, "tx_max": 0, "tx_priority": 0, "tx_weight": 0,
                                "parent": ""}
    return dev


def test_vf_ports_looked_up_once_per_batch():
    dev = with_node()
    acts = [leaf_action(DEV, n, {"parent": "vfw-a", "tx_weight": n + 1}) for n in range(8)]
    assert batch.run_actions(dev, acts) == []
    assert dev.processes == [("devlink", "-j", "port", "show", DEV), ("devlink", "--batch", "-")]
    assert [dev.st["leaves"][n]["tx_weight"] for n in range(8)] == list(range(1, 9))
    # a VF without a port: the commands before it ran, it is the failure
    acts.insert(3, leaf_action(DEV, 99, {"tx_weight": 5}))
    dev = with_node()
    errs = batch.run_actions(dev, acts[:5])
    assert [i for i, _ in errs] == [3] and "VF 99 has no devlink port" in str(errs[0][1])
    assert [dev.st["leaves"][n]["tx_weight"] for n in range(4)] == [1, 2, 3, 0]


@pytest.fixture
def bench_files(tmp_path):
    d = tmp_path / "pol"
    d.mkdir()
    for name, text in policy_bench.policy_files().items():
        (d / name).write_text(text)
    return str(d)


def ctl(tmp_path, dev, *argv):
    out = io.StringIO()
    rc = cli.main([argv[0], "--json", "--state-dir", str(tmp_path / "state"), *argv[1:]],
                  runner=dev, out=out)
    return rc, json.loads(out.getvalue())


def test_128_vfs_32_tenants_apply_in_a_few_processes_and_undo_a_refusal_exactly(tmp_path, bench_files):
    dev = Counting(numvfs=0, total=128)
    rc, doc = ctl(tmp_path, dev, "apply", bench_files)
    assert (rc, doc["result"]) == (0, "applied"), doc
    changes = [p for p in dev.processes if "-j" not in p and "-V" not in p]
    # sysfs write, then all 192 rate commands (32 nodes, 128 leaves, 32 node
    # shares) and all 128 VF commands in one batch each; DCB on its own
    assert [c[:3] for c in changes] == [("devlink", "--batch", "-"), ("ip", "-batch", "-"),
                                        ("dcb", "ets", "set"), ("dcb", "app", "add")], changes
    assert [len(s.splitlines()) for _, s in dev.batches] == [192, 128]
    assert dev.st["vfs"][77]["vlan"] == 119 and dev.st["leaves"][77]["parent"] == "vfw-t19"
    assert ctl(tmp_path, dev, "apply", bench_files)[1]["result"] == "unchanged"
    # from nothing again, with the driver refusing VF 77's settings: the
    # failure is step of VF 77, everything before it undone, nothing after it run
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "host.yaml").write_text(policy_bench.EMPTY["host.yaml"])
    assert ctl(tmp_path, dev, "apply", str(empty))[0] == 0
    before = copy.deepcopy(dev.st)
    real = dev._ip

    def ip(a):
        if a[0] == "77" and "119" in a:          # the do, not its undo
            raise Refused("vf 77: refused for the test")
        return real(a)
    dev._ip = ip
    dev.batches.clear()
    rc, doc = ctl(tmp_path, dev, "apply", bench_files)
    assert (rc, doc["result"], doc["problems"]) == (5, "restored", []), doc
    assert "vf 77" in doc["rollback_reason"] and "refused for the test" in doc["rollback_reason"]
    failed = doc["steps"][doc["ran"] - 1]
    assert failed["object"] == f"{PF} vf 77"
    ip_batch = [s for a, s in dev.batches if a[0] == "ip" and "-force" not in a][0]
    assert len(ip_batch.splitlines()) == 128          # all sent, the tool stopped at 78
    assert dev.st == before
