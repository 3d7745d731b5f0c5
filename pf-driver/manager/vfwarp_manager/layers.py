"""The layers `vfwarpctl apply` changes, in dependency order, and the ones
it does not apply yet.

A host model reads its state back from the kernel (never from memory of
what was done) and computes the steps that turn one state into another,
each step with the actions that undo it. That is all it knows: the
transaction (transaction.py) owns the journal, the order of execution,
verification and undo. States are JSON-able dicts keyed by layer; in a
target, None means "not managed here: leave it as it is".

Applied today, for the PF a host file names (model "pf"):
  sriov   sysfs sriov_numvfs                      first: the VFs must exist
  vfs     ip link set PF vf N mac/vlan+qos/spoofchk/trust/state/min+max_tx_rate

Compiled but not applied yet (NOT_APPLIED says why); a later layer plugs
in by adding a Layer to PfHost.LAYERS at its place in the order:
  eswitch (before vfs), rate, flower, dcb, networks, quotas.
"""
import os
from dataclasses import dataclass, field

from . import live
from .desired import VF_DEFAULTS

# Why each compiled layer is not applied yet; `apply` refuses files that ask
# for one unless told to skip it (--skip LAYER / --skip-unapplied).
NOT_APPLIED = {
    "eswitch": "devlink eswitch mode: vfwarp_pf has no devlink instance yet (issue 16)",
    "rate": "devlink rate nodes: vfwarp_pf has no devlink rate yet (issue 17)",
    "flower": "tc flower on VF representors: vfwarp_pf has no representors yet (issue 16)",
    "dcb": "dcb ets/app: vfwarp_pf has no DCB ops yet (issue 17)",
    "quotas": "RDMA quotas: no host interface to the device's quota command yet",
    "networks": "libvirt networks: not written yet (needs libvirt-python on the host)",
}
# Layers no file key asks for by name: every tenant implies a libvirt network.
# They are reported as not applied but never make apply refuse.
IMPLIED = {"networks"}


def needed_unapplied(policy, desired):
    """[(layer, why, where)] for what the files ask for that is not applied,
    `where` the file:line:col of the key that asks for it."""
    h = policy.host
    out = []
    if desired["eswitch"]["mode"] != "legacy":
        out.append(("eswitch", h.at("adapter", "eswitch_mode")))
    for key in ("traffic_classes", "prio_tc", "dscp_prio"):
        if h.data[key]:
            out.append(("dcb", h.at(key)))
    for t in policy.tenants:
        d, f = t.data, t.file
        if d["rate"]:
            out.append(("rate", f.at("rate")))
        if d["acl"]:
            out.append(("flower", f.at("acl")))
        if (d["rdma"] or {}).get("quotas"):
            out.append(("quotas", f.at("rdma", "quotas")))
    if desired["networks"]:
        first = policy.tenants[0].file.at("name")
        out.append(("networks", first))
    return [(layer, NOT_APPLIED[layer], where) for layer, where in out]


# ---- actions and steps --------------------------------------------------

def write_action(path, text):
    return {"write": path, "text": str(text)}


def argv_action(argv):
    return {"argv": [str(a) for a in argv]}


def run_action(runner, action):
    """Execute one action; ToolError / OSError when the kernel refuses it."""
    if "argv" in action:
        runner.check(action["argv"])
    elif "write" in action:
        runner.write_file(action["write"], action["text"])
    else:
        raise ValueError(f"unknown action {action!r}")


def describe_action(action):
    if "argv" in action:
        return " ".join(action["argv"])
    return f"echo {action['text']} > {action['write']}"


@dataclass
class Step:
    layer: str
    obj: str
    summary: str                      # what changes, "prop: live -> want, ..."
    do: list                          # actions, in order
    undo: list = field(default_factory=list)   # actions restoring the state before this step

    def __str__(self):
        return f"{self.layer} {self.obj}: {self.summary}"

    def as_json(self):
        return {"layer": self.layer, "object": self.obj, "summary": self.summary,
                "do": self.do, "undo": self.undo}

    @classmethod
    def from_json(cls, d):
        return cls(d["layer"], d["object"], d["summary"], d["do"], d["undo"])


def mismatches(live_state, target, path=()):
    """['vfs 3 max_tx_rate: 0, want 1000', ...] where live differs from target;
    None in the target is not compared (not managed, or not reported)."""
    out = []
    if isinstance(target, dict):
        if not isinstance(live_state, dict):
            return [f"{' '.join(map(str, path))}: {live_state!r}, want {target!r}"]
        for k in sorted(target, key=str):
            if target[k] is None:
                continue
            if k not in live_state:
                out.append(f"{' '.join(map(str, path + (k,)))}: missing")
                continue
            out += mismatches(live_state[k], target[k], path + (k,))
        return out
    if live_state is None:       # the kernel does not report it: nothing to compare
        return out
    if live_state != target:
        out.append(f"{' '.join(map(str, path))}: {_fmt(live_state)}, want {_fmt(target)}")
    return out


def _fmt(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


# ---- the PF model ----------------------------------------------------------

VF_PROPS = ("mac", "vlan", "qos", "spoofchk", "trust", "link_state", "max_tx_rate", "min_tx_rate")
# Properties the kernel takes together: a port VLAN with its priority
# (IFLA_VF_VLAN), and both rates (IFLA_VF_RATE: the driver checks min <= max
# on the pair, so setting one alone could be refused on the way).
VF_GROUPS = ({"vlan", "qos"}, {"min_tx_rate", "max_tx_rate"})


def vf_args(props):
    """`ip link set ... vf N` arguments for the given {prop: value}."""
    a = []
    onoff = lambda v: "on" if v else "off"  # noqa: E731
    if "mac" in props:
        a += ["mac", props["mac"]]
    if "vlan" in props:
        a += ["vlan", props["vlan"], "qos", props["qos"]]
    if "spoofchk" in props:
        a += ["spoofchk", onoff(props["spoofchk"])]
    if "trust" in props:
        a += ["trust", onoff(props["trust"])]
    if "link_state" in props:
        a += ["state", props["link_state"]]
    if "max_tx_rate" in props:
        a += ["min_tx_rate", props["min_tx_rate"], "max_tx_rate", props["max_tx_rate"]]
    return a


def vf_changed(have, want):
    """Properties to set to turn have into want, with their groups completed."""
    changed = {p for p in VF_PROPS if want.get(p) is not None and have.get(p) is not None
               and want[p] != have[p]}
    for g in VF_GROUPS:
        if changed & g:
            changed |= g
    return changed


class PfHost:
    """sriov_numvfs and the per-VF `ip link` settings of one PF."""

    kind = "pf"
    LAYERS = ("sriov", "vfs")

    def __init__(self, pf):
        self.pf = pf
        self.numvfs_path = os.path.join(live.SYSFS_NET, pf, "device", "sriov_numvfs")

    @property
    def scope(self):
        return {"pf": self.pf}

    def read(self, runner):
        return {"sriov": {"numvfs": live.read_sriov(runner, self.pf)["numvfs"]},
                "vfs": live.read_ip_link_vfs(runner, self.pf)}

    @staticmethod
    def normalize(state):
        """A state back from JSON (VF numbers became strings)."""
        return {"sriov": {"numvfs": int(state["sriov"]["numvfs"])},
                "vfs": {int(k): v for k, v in state["vfs"].items()}}

    @staticmethod
    def target(desired):
        """The applied layers of a desired state (desired.py), owners dropped."""
        return {"sriov": {"numvfs": desired["sriov"]["numvfs"]},
                "vfs": {n: {p: vf[p] for p in VF_PROPS} for n, vf in desired["vfs"].items()}}

    def _vf_step(self, n, have, want):
        changed = vf_changed(have, want)
        if not changed:
            return None
        do = {p: want[p] for p in changed}
        undo = {p: have[p] for p in changed}
        summary = ", ".join(f"{p}: {_fmt(have[p])} -> {_fmt(want[p])}"
                            for p in VF_PROPS if p in changed and have[p] != want[p])
        base = ["ip", "link", "set", "dev", self.pf, "vf", n]
        return Step("vfs", f"{self.pf} vf {n}", summary,
                    [argv_action(base + vf_args(do))], [argv_action(base + vf_args(undo))])

    def _restore_vfs(self, vfs):
        """Actions giving freshly created VFs (at the driver's defaults) the settings in vfs."""
        acts = []
        for n in sorted(vfs):
            s = self._vf_step(n, VF_DEFAULTS, vfs[n])
            if s:
                acts += s.do
        return acts

    def steps(self, before, target):
        """Steps turning `before` (a full live state) into `target`, in
        dependency order: the VF count first, then each VF's settings."""
        pf, b_n, t_n = self.pf, before["sriov"]["numvfs"], target["sriov"]["numvfs"]
        out = []
        if b_n != t_n:
            write = lambda n: write_action(self.numvfs_path, n)  # noqa: E731
            # Removing VFs forgets their settings: undoing it re-creates them and
            # gives each its settings back.
            back = [write(b_n)] + self._restore_vfs(before["vfs"]) if b_n else [write(0)]
            if b_n and t_n:
                # The PCI core changes a non-zero count only through 0.
                out.append(Step("sriov", pf, f"sriov_numvfs: {b_n} -> 0", [write(0)], back))
                out.append(Step("sriov", pf, f"sriov_numvfs: 0 -> {t_n}", [write(t_n)], [write(0)]))
            else:
                out.append(Step("sriov", pf, f"sriov_numvfs: {b_n} -> {t_n}", [write(t_n)], back))
            have_vfs = {}                 # new VFs start from the driver's defaults
        else:
            have_vfs = before["vfs"]
        for n in sorted(target["vfs"]):
            s = self._vf_step(n, have_vfs.get(n, VF_DEFAULTS), target["vfs"][n])
            if s:
                out.append(s)
        return out


MODELS = {"pf": lambda scope: PfHost(scope["pf"])}


def model_from(kind, scope):
    """The host model a journal or snapshot file names."""
    if kind not in MODELS:
        raise ValueError(f"unknown host model {kind!r}")
    return MODELS[kind](scope)
