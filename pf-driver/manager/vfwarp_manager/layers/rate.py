"""The devlink rate layer of a PF: the nodes vfwarpctl owns (vfw-TENANT),
the VFs' leaves (parent, tx_weight, tx_priority) and the uplink's line rate
(devlink param line_rate_kbps). A VF leaf's tx_share/tx_max are the VF's
`ip link` min/max_tx_rate (the driver keeps one model for both), so the VF
layer sets them and this one never does: one interface per value.

Steps come in three phases around the VF layer's, so that every state on
the way is one the driver accepts (guarantees always fit: a parent's
children's tx_share within its tx_share, else its tx_max, and at the root
within the line rate):
  shrink     guarantees and caps that go down (VFs first, then nodes, then
             the line rate), the tx_share of a VF that changes parent down
             to 0 for the move, and that of a node to be deleted
  structure  nodes added (without a tx_share yet), leaves moved and
             re-weighted, nodes' weight/priority/parent, nodes deleted
  grow       the line rate, then nodes' tx_max and tx_share, then VFs'
             guarantees that go up (the VF layer)
Each value between the two states is at most the smaller of its two ends
in shrink, so the fit of the end states carries over to every step; the
undo of each step restores exactly what it changed, so undoing in reverse
walks the same states back.
"""
from . import live
from .actions import Step, argv_action

NODE_PREFIX = "vfw-"             # the rate nodes vfwarpctl owns: vfw-TENANT
# A VF's devlink rate leaf when nobody configured it: at the root, weight and
# priority unset (devlink prints neither; its 0 weight means 1).
LEAF_DEFAULTS = {"parent": "", "tx_weight": 0, "tx_priority": 0}

NODE_PROPS = ("tx_share", "tx_max", "tx_priority", "tx_weight", "parent")
LEAF_PROPS = ("parent", "tx_weight", "tx_priority")
RATE = ["devlink", "port", "function", "rate"]


def owned(name):
    return name.startswith(NODE_PREFIX)


def _args(props):
    a = []
    for p in ("tx_share", "tx_max"):
        if p in props:
            # devlink takes bits with a unit and stores bytes/s: exact for whole bytes.
            a += [p, f"{props[p] * 8}bit" if props[p] else "0"]
    for p in ("tx_priority", "tx_weight"):
        if p in props:
            a += [p, str(props[p])]
    if "parent" in props:
        a += ["parent", props["parent"]] if props["parent"] else ["noparent"]
    return a


def _summary(have, want):
    f = lambda v: "(root)" if v == "" else str(v)  # noqa: E731
    return ", ".join(f"{p}: {f(have.get(p, '-'))} -> {f(want[p])}" for p in want)


def node_set(dev, name, have, props):
    base = RATE + ["set", f"{dev}/{name}"]
    return Step("rate", f"{dev}/{name}", _summary(have, props),
                [argv_action(base + _args(props))],
                [argv_action(base + _args({p: have[p] for p in props}))])


def leaf_action(dev, vf, props):
    """A leaf is named by its devlink port, which only exists while its VF
    does (a step may run right after the VFs were created): the port index
    is looked up when the action runs (actions.run_action)."""
    return {"argv": RATE + ["set", f"{dev}/vf{vf}"] + _args(props), "vf_port": [dev, vf, len(RATE) + 1]}


def leaf_set(dev, vf, have, props):
    return Step("rate", f"{dev} vf {vf}", _summary(have, props),
                [leaf_action(dev, vf, props)], [leaf_action(dev, vf, {p: have[p] for p in props})])


def node_add(dev, name, props):
    return argv_action(RATE + ["add", f"{dev}/{name}"] +
                       _args({p: v for p, v in props.items() if v not in (0, "")}))


def node_del(dev, name):
    return argv_action(RATE + ["del", f"{dev}/{name}"])


def line_set(dev, kbps):
    return argv_action(["devlink", "dev", "param", "set", dev, "name", "line_rate_kbps",
                        "value", str(kbps), "cmode", "runtime"])


def _cap(v):
    """A tx_max or line rate as a bound: 0 is none."""
    return float("inf") if v == 0 else v


def read(runner, dev, doc=None):
    """The owned nodes and every VF's leaf as read back; doc: `devlink -j port
    function rate show` as just read (the host model's probe)."""
    tree = live.read_rate_tree(runner, dev, doc)
    return {"nodes": {k: v for k, v in tree["nodes"].items() if owned(k)},
            # tx_share/tx_max of a VF's leaf are its ip link rates (the vfs layer)
            "leaves": {n: {p: a[p] for p in LEAF_PROPS} for n, a in tree["leaves"].items()}}


def target(desired):
    return {"nodes": {k: {p: v[p] for p in NODE_PROPS} for k, v in desired["rate_nodes"].items()},
            "leaves": {n: {p: v[p] for p in LEAF_PROPS} for n, v in desired["rate_leaves"].items()}}


def read_line(runner, dev):
    return {"kbps": live.read_line_rate(runner, dev)}


def target_line(desired):
    return {"kbps": desired["line"]["kbps"]}


def leaves_restore(dev, leaves):
    """Actions giving re-created VFs (leaves at the defaults) these leaves."""
    acts = []
    for n in sorted(leaves):
        props = {p: leaves[n][p] for p in LEAF_PROPS if leaves[n][p] != LEAF_DEFAULTS[p]}
        if props:
            acts.append(leaf_action(dev, n, props))
    return acts


class RatePlan:
    """Steps of the rate layer from `cur` (nodes, leaves; line) to `want`,
    by phase; `cur` is updated as steps are planned."""

    def __init__(self, dev, cur_rate, want_rate, cur_line, want_line):
        self.dev = dev
        self.rate, self.want = cur_rate, want_rate          # None: not managed
        self.line, self.want_line = cur_line, want_line

    def moves(self, vf):
        if self.rate is None:
            return False
        have = self.rate["leaves"].get(vf, LEAF_DEFAULTS)["parent"]
        return have != self.want["leaves"][vf]["parent"]

    def _node_step(self, name, props):
        have = self.rate["nodes"][name]
        s = node_set(self.dev, name, have, props)
        have.update(props)
        return s

    def _line_step(self, kbps):
        s_have = self.line["kbps"]
        s = Step("rate", f"{self.dev} line_rate_kbps", f"line_rate_kbps: {s_have} -> {kbps}",
                 [line_set(self.dev, kbps)], [line_set(self.dev, s_have)])
        self.line["kbps"] = kbps
        return s

    def shrink(self):
        out = []
        if self.rate is not None:
            for name in sorted(set(self.rate["nodes"]) & set(self.want["nodes"])):
                have, want = self.rate["nodes"][name], self.want["nodes"][name]
                if want["tx_share"] < have["tx_share"]:
                    out.append(self._node_step(name, {"tx_share": want["tx_share"]}))
                if _cap(want["tx_max"]) < _cap(have["tx_max"]):
                    out.append(self._node_step(name, {"tx_max": want["tx_max"]}))
            for name in sorted(set(self.rate["nodes"]) - set(self.want["nodes"])):
                # A node on its way out gives up its guarantee now: it would
                # count against a line rate going down until its deletion.
                if self.rate["nodes"][name]["tx_share"]:
                    out.append(self._node_step(name, {"tx_share": 0}))
        if self.want_line is not None and _cap(self.want_line["kbps"]) < _cap(self.line["kbps"]):
            out.append(self._line_step(self.want_line["kbps"]))
        return out

    def structure(self):
        out = []
        if self.rate is None:
            return out
        nodes, leaves, dev = self.rate["nodes"], self.rate["leaves"], self.dev
        for name in sorted(set(self.want["nodes"]) - set(nodes)):
            want = self.want["nodes"][name]
            props = {p: want[p] for p in ("tx_max", "tx_priority", "tx_weight", "parent")}
            out.append(Step("rate", f"{dev}/{name}", "add node: " + _summary({}, props),
                            [node_add(dev, name, props)], [node_del(dev, name)]))
            nodes[name] = dict(props, tx_share=0)
        for name in sorted(set(self.want["nodes"]) & set(nodes)):
            have, want = nodes[name], self.want["nodes"][name]
            props = {p: want[p] for p in ("tx_priority", "tx_weight", "parent") if want[p] != have[p]}
            if props:
                out.append(self._node_step(name, props))
        for n in sorted(self.want["leaves"]):
            have = leaves.setdefault(n, dict(LEAF_DEFAULTS))
            want = self.want["leaves"][n]
            props = {p: want[p] for p in LEAF_PROPS if want[p] != have[p]}
            if props:
                out.append(leaf_set(dev, n, have, props))
                have.update(props)
        for name in sorted(set(nodes) - set(self.want["nodes"])):
            have = nodes.pop(name)
            out.append(Step("rate", f"{dev}/{name}", "delete node (no file asks for it)",
                            [node_del(dev, name)], [node_add(dev, name, have)]))
        return out

    def grow(self):
        out = []
        if self.want_line is not None and self.line["kbps"] != self.want_line["kbps"]:
            out.append(self._line_step(self.want_line["kbps"]))
        if self.rate is not None:
            for name in sorted(self.want["nodes"]):
                have, want = self.rate["nodes"][name], self.want["nodes"][name]
                if want["tx_max"] != have["tx_max"]:
                    out.append(self._node_step(name, {"tx_max": want["tx_max"]}))
                if want["tx_share"] != have["tx_share"]:
                    out.append(self._node_step(name, {"tx_share": want["tx_share"]}))
        return out
