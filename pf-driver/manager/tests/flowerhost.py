"""The flower layer (layers/flower.py) against a real kernel without the
hardware: veth devices in a private network namespace stand for a PF's
representors, and the filters run in software (no skip_sw: nothing could
offload them), so compile -> apply -> read back -> drift -> undo is the
kernel's and tc's, not a replay. The host model differs from the PF's only
in how it finds the representors (a fixed map instead of devlink) and in
the skip flag; the filters, their argv, reading and steps are the layer's.

The PF host model takes the same flag from VFWARP_FLOWER_SOFTWARE=1
(docs/policy.md, "Testing the flower layer").

Needs root, `ip netns`, and a kernel with cls_flower, act_gact, act_mirred
and act_police (Debian's has them as modules; a kernel without them makes
`selftest` exit 77 and the unit test skip). Runnable without pytest, so the
lab runs the same check on a host kernel that has them:
  flowerhost.py selftest        exit 0: passed, 1: failed (the reason printed), 77: cannot run
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vfwarp_manager.layers import desired, flower as flower_layer, host as layers  # noqa: E402
from vfwarp_manager.policy import validate as policy  # noqa: E402
from vfwarp_manager.txn import statedir, transaction  # noqa: E402
from vfwarp_manager.layers.actions import Step  # noqa: E402
from vfwarp_manager.runner import Runner  # noqa: E402

REPRS = {0: "r0", 1: "r1", 2: "r2"}


class FlowerHost:
    kind = "flowerns"

    def __init__(self, netns, reprs, skip_sw=False):
        self.netns, self.reprs, self.skip_sw = netns, {int(k): v for k, v in reprs.items()}, skip_sw

    @property
    def scope(self):
        return {"netns": self.netns, "reprs": self.reprs, "skip_sw": self.skip_sw}

    @property
    def where(self):
        return {"dev": None, "netns": self.netns, "reprs": self.reprs}

    def read(self, runner):
        by_name = {v: k for k, v in self.reprs.items()}
        out = {}
        for vf, name in sorted(self.reprs.items()):
            fs = flower_layer.read_dev(runner, name, self.netns, by_name)
            if fs:
                out[vf] = fs
        return {"flower": out}

    @staticmethod
    def normalize(state):
        return {"flower": {int(vf): {int(p) if str(p).isdigit() else p: f for p, f in fs.items()}
                           for vf, fs in state["flower"].items()}}

    def target(self, want):
        """The read-back a compiled {vf: {pref: filter}} must give."""
        return {"flower": {vf: {p: flower_layer.target_filter(
            {k: v for k, v in f.items() if k != "owner"}, self.skip_sw) for p, f in fs.items()}
            for vf, fs in want.items()}}

    def steps(self, before, target):
        return flower_layer.steps(self.where, before["flower"], target["flower"], self.skip_sw, Step)


layers.MODELS["flowerns"] = lambda scope: FlowerHost(scope["netns"], scope["reprs"],
                                                     scope.get("skip_sw", False))

HOST = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 3, eswitch_mode: switchdev, " \
       "line_rate: 10gbit}\n"
TENANT = """version: 1
kind: tenant
name: blue
vfs: {range: 0-1}
acl:
  - {action: deny, protocol: udp, dst_port: 5000-5999}
  - {action: allow, protocol: tcp, dst: 10.1.2.0/24, dst_port: 22}
  - {action: police, protocol: ipv4, src: 10.9.0.0/16, police: {rate: 8mbit, burst: 32768}}
  - {action: mirror, mirror_to: 1, protocol: icmp}
  - {action: deny, protocol: ipv4}
"""


def compile_files(files):
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            Path(d, name).write_text(text)
        return desired.compile_policy(policy.load([d]))["flower"]


def sh(argv, check=True):
    return subprocess.run(argv, capture_output=True, text=True, check=check)


def make_ns():
    ns = f"vfwf-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    sh(["ip", "netns", "add", ns])
    for vf, name in REPRS.items():
        sh(["ip", "-n", ns, "link", "add", name, "type", "veth", "peer", "name", f"p{vf}"])
        sh(["ip", "-n", ns, "link", "set", name, "up"])
    return ns


def can_run():
    """None, or why this kernel cannot run the check."""
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    try:
        ns = make_ns()
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        return f"ip netns / veth: {getattr(e, 'stderr', e)}"
    try:
        sh(["tc", "-n", ns, "qdisc", "add", "dev", "r0", "clsact"])
        for act in (["drop"], ["police", "rate", "1mbit", "burst", "10k", "conform-exceed", "drop/pipe"],
                    ["mirred", "egress", "mirror", "dev", "r1"]):
            r = sh(["tc", "-n", ns, "filter", "add", "dev", "r0", "ingress", "protocol", "ip", "pref", "1",
                    "flower", "action"] + act, check=False)
            if r.returncode:
                return f"this kernel cannot run tc flower with action {act[0]}: {r.stderr.strip()}"
            sh(["tc", "-n", ns, "filter", "del", "dev", "r0", "ingress", "pref", "1"])
        return None
    finally:
        sh(["ip", "netns", "del", ns], check=False)


class Failed(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def selftest():
    why = can_run()
    if why:
        print(f"cannot run: {why}")
        return 77
    ns = make_ns()
    runner = Runner()
    sd = statedir.StateDir(tempfile.mkdtemp(prefix="vfwf-state-"))
    sd.ensure()
    model = FlowerHost(ns, REPRS)
    try:
        # A filter vfwarpctl does not own: never read, changed or removed.
        foreign = ["tc", "-n", ns, "filter", "add", "dev", "r0", "ingress", "protocol", "ip", "pref",
                   "10", "flower", "ip_proto", "udp", "dst_port", "7", "action", "drop"]
        sh(["tc", "-n", ns, "qdisc", "add", "dev", "r0", "clsact"])
        sh(foreign)
        show = lambda dev: sh(["tc", "-n", ns, "-j", "filter", "show", "dev", dev, "ingress"]).stdout  # noqa: E731
        foreign_of = lambda: [e for e in json.loads(show("r0")) if e.get("pref") == 10 and "options" in e]  # noqa: E731
        before_foreign = foreign_of()

        want_a = compile_files({"host.yaml": HOST, "blue.yaml": TENANT})
        t_a = model.target(want_a)
        check(sorted(t_a["flower"][0]) == [1000, 1001, 1002, 1004, 1006, 1007, 1008],
              f"prefs of the compiled rules: {sorted(t_a['flower'][0])}")
        out = transaction.run(sd, model, runner, t_a, "apply")
        check(out.result == "applied", f"apply from nothing: {out.result} {out.reason}")
        live = model.read(runner)
        check(layers.mismatches(live, t_a) == [], f"read back: {layers.mismatches(live, t_a)}")
        check(live["flower"][0][1004]["_police"] == {"rate": 10**6, "burst": 32768},
              f"police read back from tc's text: {live['flower'][0][1004]['_police']}")
        check(foreign_of() == before_foreign, "the foreign filter changed")
        snap_a = model.read(runner)
        print(f"applied: {len(out.steps)} steps; read back equals the target")

        out = transaction.run(sd, model, runner, t_a, "apply")
        check(out.result == "unchanged", f"re-apply: {out.result}")

        # drift: a filter deleted by hand is missing from the read-back, and
        # the next apply puts it back
        sh(["tc", "-n", ns, "filter", "del", "dev", "r1", "ingress", "pref", "1006"])
        wrong = layers.mismatches(model.read(runner), t_a)
        check(wrong and all("1006" in w for w in wrong), f"hand deletion not seen: {wrong}")
        out = transaction.run(sd, model, runner, t_a, "apply")
        check(out.result == "applied" and len(out.steps) == 1, f"restore: {out.result} {out.steps}")
        check(layers.mismatches(model.read(runner), t_a) == [], "not restored")
        print("hand deletion seen and restored")

        # files B: a rule edited, one gone, the tenant on VFs 1-2 now. A
        # failure after each step: every step undone, the host back at A.
        tenant_b = TENANT.replace("range: 0-1", "range: 1-2").replace("mirror_to: 1", "mirror_to: 2") \
            .replace("dst_port: 5000-5999", "dst_port: 5000-6999") \
            .replace("  - {action: deny, protocol: ipv4}\n", "")
        t_b = model.target(compile_files({"host.yaml": HOST, "blue.yaml": tenant_b}))
        n = len(model.steps(model.read(runner), t_b))
        for k in sorted({1, n // 2, n}):     # first, middle, last steps
            out = transaction.run(sd, model, runner, t_b, "apply", inject=transaction.Injection(f"{k}:after"))
            check(out.result == "restored", f"failure after step {k}: {out.result} {out.problems}")
            now = model.read(runner)
            check(layers.mismatches(now, snap_a) == [] and out.problems == [],
                  f"after a failure at step {k}: {layers.mismatches(now, snap_a)} {out.problems}")
        print(f"a failure after steps {sorted({1, n // 2, n})} of {n}: undone, read back "
              "equal to the snapshot")
        out = transaction.run(sd, model, runner, t_b, "apply")
        check(out.result == "applied" and layers.mismatches(model.read(runner), t_b) == [],
              f"apply B: {out.result} {out.reason}")

        # the tenant deleted: its filters go, the foreign one stays
        out = transaction.run(sd, model, runner, {"flower": {}}, "apply")
        check(out.result == "applied" and model.read(runner) == {"flower": {}}, "tenant removal")
        check(foreign_of() == before_foreign, "the foreign filter changed")
        print("tenant removed: its filters gone, the foreign filter untouched")
        return 0
    except Failed as e:
        print(f"FAILED: {e}")
        return 1
    finally:
        sh(["ip", "netns", "del", ns], check=False)


if __name__ == "__main__":
    if sys.argv[1:] == ["selftest"]:
        sys.exit(selftest())
    sys.exit(f"usage: {sys.argv[0]} selftest")
