"""The layers `vfwarpctl apply` changes, in dependency order, and the ones
it does not apply yet.

A host model reads its state back from the kernel (never from memory of
what was done) and computes the steps that turn one state into another,
each step with the actions that undo it. That is all it knows: the
transaction (txn/transaction.py) owns the journal, the order of execution,
verification and undo. States are JSON-able dicts keyed by layer; in a
target, None means "not managed here: leave it as it is".

Each layer is a module of this folder that reads it, gives its target and
plans its steps; the PF's model (PfHost) chooses the layers a host has and
puts their steps in dependency order. Applied, for the PF a host file names
(model "pf"):
  sriov   sysfs sriov_numvfs (sriov.py)           first: the VFs must exist
  eswitch devlink eswitch mode (eswitch.py)       representors exist in switchdev only
  vfs     ip link set PF vf N mac/vlan+qos/spoofchk/trust/state/min+max_tx_rate
          (vfs.py)
  rate    devlink rate: nodes vfw-TENANT, VF leaves' parent/weight/priority,
          the line rate param (rate.py: interleaved with vfs so that
          guarantees fit at every step)
  flower  tc flower filters on the VF representors (flower.py); when
          the VFs or the eswitch mode change, the owned filters are removed
          before (they would vanish with their representors, and their undo
          must come after the representors are back) and added after
  dcb     dcb ets, maxrate, app dscp-prio, apptrust (dcb.py)
  networks libvirt networks vfwarp-TENANT, last (network.py): where
          libvirt is installed (virsh); elsewhere reported as not applied

Compiled but not applied yet (NOT_APPLIED says why): quotas.
"""
import copy
import os

from . import dcb as dcb_layer, eswitch, flower as flower_layer, live
from . import network as network_layer, rate as rate_layer, sriov, vfs
# actions.py holds actions and steps; host models use them from here.
from .actions import Step, argv_action, describe_action, run_action, write_action  # noqa: F401
from .rate import LEAF_DEFAULTS
from .vfs import VF_DEFAULTS, fmt as _fmt

# Why each compiled layer is not applied yet; `apply` refuses files that ask
# for one unless told to skip it (--skip LAYER / --skip-unapplied).
NOT_APPLIED = {
    "quotas": "RDMA quotas: no host interface to the device's quota command yet",
}
# Why a layer is not applied on this host (PfHost.for_desired decides):
# every tenant implies a libvirt network, which needs libvirt. Reported as
# not applied, never a reason to refuse the rest.
UNAVAILABLE = {"networks": "libvirt networks: libvirt is not installed on this host (no virsh)"}
# Layers `apply --skip` may leave alone although the host could apply them.
# networks: the boot unit (vfwarp-policy.service) runs before libvirtd so that
# the VFs exist when libvirt starts its autostart networks and guests; libvirt
# restores the networks it holds persistently itself, and asking it from
# there would wait for a daemon ordered after us.
SKIPPABLE = {"networks": "libvirt networks: skipped (--skip networks): libvirt keeps them"}


def needed_unapplied(policy, desired):
    """[(layer, why, where)] for what the files ask for that is not applied,
    `where` the file:line:col of the key that asks for it."""
    out = []
    for t in policy.tenants:
        d, f = t.data, t.file
        if (d["rdma"] or {}).get("quotas"):
            out.append(("quotas", f.at("rdma", "quotas")))
    return [(layer, NOT_APPLIED[layer], where) for layer, where in out]


def unavailable(model, desired):
    """[(layer, why)] the files imply and this host's model cannot apply."""
    return [("networks", UNAVAILABLE["networks"])] if desired["networks"] and not model.networks else []



def mismatches(live_state, target, path=()):
    """['vfs 3 max_tx_rate: 0, want 1000', ...] where live differs from target;
    None in the target is not compared (not managed, or not reported)."""
    out = []
    if isinstance(target, dict):
        if not isinstance(live_state, dict):
            return [f"{' '.join(map(str, path))}: {live_state!r}, want {target!r}"]
        for k in sorted(target, key=str):
            if target[k] is None or str(k).startswith("_"):
                continue                # not managed; '_': carried, not compared (flower_layer)
            if k not in live_state:
                out.append(f"{' '.join(map(str, path + (k,)))}: missing")
                continue
            out += mismatches(live_state[k], target[k], path + (k,))
        # What the target does not name is not there: an owned rate node or
        # DSCP entry no file asks for, a VF past the count.
        out += [f"{' '.join(map(str, path + (k,)))}: {live_state[k]!r} present, not wanted"
                for k in sorted(set(live_state) - set(target), key=str)]
        return out
    if live_state is None:       # the kernel does not report it: nothing to compare
        return out
    if live_state != target:
        out.append(f"{' '.join(map(str, path))}: {_fmt(live_state)}, want {_fmt(target)}")
    return out


# ---- the PF model ----------------------------------------------------------

class PfHost:
    """sriov_numvfs, the eswitch mode, the per-VF `ip link` settings, the
    devlink rate tree and line rate, the flower filters on the VFs'
    representors and DCB of one PF. The scope says which of the optional
    layers this model reads and changes (kept in journals and snapshots,
    so a rollback reads what its apply read):
      eswitch  devlink eswitch mode (the files ask for switchdev, or the PF
               is in switchdev mode: a host file saying legacy puts it back)
      rate     devlink rate nodes and VF leaves (the PF has devlink rate, or
               the files ask for it)
      line     the devlink param line_rate_kbps (enforce_line_rate)
      flower   owned filters on the representors (the files have ACLs, or
               the PF is in switchdev mode: owned filters may have to go)
      skip_sw  flower filters in the adapter only (default); false runs them
               in software (VFWARP_FLOWER_SOFTWARE=1, for tests)
      dcb      the DCB parts the host file owns (dcb.PARTS)
      networks the libvirt URI of the owned networks (None: libvirt is not
               installed, or not reachable and no file asks for a network)
refuse_in_use is not scope: apply sets it (unless --allow-disruptive), so a
change to a network a running domain uses is refused; restoring a snapshot
never refuses."""

    kind = "pf"
    LAYERS = ("sriov", "eswitch", "vfs", "rate", "line", "flower", "dcb", "networks")

    def __init__(self, pf, rate=False, line=False, dcb=(), eswitch=False, flower=False,
                 skip_sw=True, networks=None):
        self.pf, self.rate, self.line, self.dcb = pf, bool(rate), bool(line), list(dcb)
        self.eswitch, self.flower, self.skip_sw = bool(eswitch), bool(flower), bool(skip_sw)
        self.networks = networks
        self.refuse_in_use = False
        self._foreign = []        # vfwarp-* networks without our metadata, as last read
        self.numvfs_path = sriov.numvfs_path(pf)
        self._dev = None
        # What for_desired read to choose the layers, handed to the first
        # read() (the snapshot, moments later under the lock) instead of
        # asking the tools again; every later read asks the kernel.
        self._probed = {}

    @classmethod
    def for_desired(cls, runner, desired, libvirt=True):
        """The model for applying desired: the rate layer when the files ask
        for rate settings or the PF has devlink rate (its owned nodes may
        have to go, its VFs' leaves go back to the defaults); libvirt's
        networks unless `libvirt` is false (not even probed)."""
        pf = desired["pf"]
        asks = bool(desired["rate_nodes"]) or any(
            leaf[p] != LEAF_DEFAULTS[p] for leaf in desired["rate_leaves"].values() for p in LEAF_DEFAULTS)
        has_rate, rate_doc = live.has_rate_tree(runner, pf)
        rate = asks or has_rate
        dev = None
        try:
            dev = live.devlink_dev(runner, pf)
            live_mode = live.read_eswitch(runner, dev)
        except live.LiveError:
            live_mode = None       # no devlink: nothing to read unless the files ask
        switchdev = live_mode == "switchdev"
        uri, names = cls._probe_libvirt(runner, desired) if libvirt else (None, None)
        m = cls(pf, rate, desired["line"] is not None, dcb_layer.parts(desired["dcb"]),
                eswitch=desired["eswitch"]["mode"] != "legacy" or switchdev,
                flower=bool(desired["flower"]) or switchdev,
                skip_sw=os.environ.get("VFWARP_FLOWER_SOFTWARE") != "1", networks=uri)
        m._probed = {"rate_doc": rate_doc, "eswitch": live_mode, "net_names": names}
        # Known now: a snapshot that takes the eswitch mode from the probe
        # may ask nothing else that would look the instance up, and steps()
        # need it (an eswitch mode change on a PF without devlink rate).
        m._dev = dev
        return m

    @staticmethod
    def _probe_libvirt(runner, desired):
        """(URI, network names) when libvirt is there: owned networks are
        managed whether or not a file asks for one (a deleted tenant's must
        go). Without virsh: (None, None). virsh failing: a LiveError when
        the files ask for a network, else (None, None): nothing to remove
        can be seen, nothing asked for is missed."""
        if not runner.which("virsh"):
            return None, None
        uri = os.environ.get("VFWARP_LIBVIRT_URI") or network_layer.URI
        try:
            return uri, network_layer.lists(runner, uri, sorted(desired["networks"]))
        except live.LiveError:
            if desired["networks"]:
                raise
            return None, None

    def _take_probed(self, key):
        return self._probed.pop(key, None)

    @property
    def scope(self):
        return {"pf": self.pf, "rate": self.rate, "line": self.line, "dcb": self.dcb,
                "eswitch": self.eswitch, "flower": self.flower, "skip_sw": self.skip_sw,
                "networks": self.networks}

    @property
    def where(self):
        """How a flower action finds the representors (flower_layer.reprs_of)."""
        return {"dev": self._dev, "netns": None, "reprs": None}

    def dev(self, runner):
        if self._dev is None:
            self._dev = live.devlink_dev(runner, self.pf)
        return self._dev

    def read(self, runner):
        st = {"sriov": sriov.read(runner, self.pf), "vfs": vfs.read(runner, self.pf)}
        if self.eswitch:
            mode = self._take_probed("eswitch")
            st["eswitch"] = {"mode": mode} if mode else eswitch.read(runner, self.dev(runner))
        st.update(self.read_devlink(runner))
        names = self._probed.get("net_names")
        self._probed = {"net_names": names} if names is not None else {}
        if self.flower:
            st["flower"] = self.read_flower(runner)
        st.update(self.read_dcb(runner))
        if self.networks:
            st["networks"] = self.read_networks(runner)
        return st

    def read_networks(self, runner):
        """{name: state} of the owned libvirt networks; the foreign vfwarp-*
        names are kept for steps()."""
        names = self._probed.pop("net_names", None)
        nets, self._foreign = network_layer.read_pf(runner, self.networks, self.pf, names)
        return nets

    def read_flower(self, runner):
        """{vf: {pref: filter}}: the owned filters of each VF's representor
        (VFs without one, or without owned filters, are left out)."""
        return flower_layer.read(runner, self.dev(runner))

    def read_devlink(self, runner):
        st = {}
        if self.rate:
            st["rate"] = rate_layer.read(runner, self.dev(runner), self._take_probed("rate_doc"))
        if self.line:
            st["line"] = rate_layer.read_line(runner, self.dev(runner))
        return st

    def read_dcb(self, runner):
        return {"dcb": dcb_layer.read(runner, self.pf, self.dcb)} if self.dcb else {}

    @staticmethod
    def normalize(state):
        """A state back from JSON (VF numbers and DSCPs became strings)."""
        out = {"sriov": {"numvfs": int(state["sriov"]["numvfs"])},
               "vfs": {int(k): v for k, v in state["vfs"].items()}}
        if "rate" in state:
            out["rate"] = {"nodes": state["rate"]["nodes"],
                           "leaves": {int(k): v for k, v in state["rate"]["leaves"].items()}}
        if "line" in state:
            out["line"] = state["line"]
        if "eswitch" in state:
            out["eswitch"] = state["eswitch"]
        if "flower" in state:
            out["flower"] = {int(vf): {int(p) if str(p).isdigit() else p: f for p, f in fs.items()}
                             for vf, fs in state["flower"].items()}
        if "dcb" in state:
            out["dcb"] = dict(state["dcb"])
            if out["dcb"].get("dscp_prio") is not None:
                out["dcb"]["dscp_prio"] = {int(k): v for k, v in out["dcb"]["dscp_prio"].items()}
        if "networks" in state:
            out["networks"] = state["networks"]     # keyed by name, VF numbers in lists: as read
        return out

    def target(self, desired):
        """The applied layers of a desired state (desired.py), owners dropped."""
        t = {"sriov": sriov.target(desired), "vfs": vfs.target(desired)}
        if self.rate:
            t["rate"] = rate_layer.target(desired)
        if self.line:
            t["line"] = rate_layer.target_line(desired)
        if self.eswitch:
            t["eswitch"] = eswitch.target(desired)
        if self.flower:
            t["flower"] = flower_layer.target(desired, self.skip_sw)
        if self.dcb:
            t["dcb"] = dcb_layer.target(desired["dcb"], self.dcb)
        if self.networks:
            t["networks"] = network_layer.targets(desired)
        return t

    def _restore_vfs(self, dev, vf_settings, leaves):
        """Actions giving freshly created VFs (at the driver's defaults) the
        settings in vf_settings and the leaves in leaves: a leaf's parent
        before the VF's guarantee, which has to fit under it."""
        acts = rate_layer.leaves_restore(dev, leaves) if leaves else []
        return acts + vfs.restore(self.pf, vf_settings)

    def steps(self, before, target):
        """Steps turning `before` (a full live state) into `target`, in
        dependency order: the VF count first, then the VFs' settings and the
        rate tree in the phases of rate.py, then DCB."""
        pf, b_n, t_n = self.pf, before["sriov"]["numvfs"], target["sriov"]["numvfs"]
        managed_rate = self.rate and target.get("rate") is not None
        dev = self._dev                   # known once read() has run
        if (managed_rate or self.line or self.eswitch or self.flower) and dev is None:
            raise RuntimeError("PfHost.steps: read the live state first (the devlink instance)")
        cur_rate = copy.deepcopy(before["rate"]) if managed_rate else None
        out = []
        esw_have = before["eswitch"]["mode"] if self.eswitch else None
        esw_want = target["eswitch"]["mode"] if self.eswitch else None
        flower_have = before.get("flower", {}) if self.flower else None
        if flower_have and (b_n != t_n or esw_have != esw_want):
            # The representors (and their filters) go with the VFs or the
            # mode: remove the filters first, so that their undo, after the
            # representors are back, puts them back.
            out += flower_layer.steps(self.where, flower_have, {}, self.skip_sw, Step)
            flower_have = {}
        nets_have = before.get("networks", {}) if self.networks else None
        uuids = {}
        if nets_have and b_n != t_n and target.get("networks") is not None:
            # libvirt checks at definition that a pool's addresses are VFs:
            # the networks go before the VF count changes, so that their
            # undo (the old XML) runs once the old VFs are back, and come
            # again (same uuid) after the new VFs exist.
            out += network_layer.steps(self.networks, pf, nets_have, {}, self._foreign,
                                       self.refuse_in_use, Step)
            uuids = {n: v["_uuid"] for n, v in nets_have.items()}
            nets_have = {}
        if b_n != t_n:
            write = lambda n: sriov.write(self.numvfs_path, n)  # noqa: E731
            # Removing VFs forgets their settings: undoing it re-creates them and
            # gives each its settings back.
            back = [write(b_n)] + self._restore_vfs(
                dev, before["vfs"], cur_rate["leaves"] if cur_rate else None) if b_n else [write(0)]
            out += sriov.steps(pf, self.numvfs_path, b_n, t_n, back)
            have_vfs = {}                 # new VFs start from the driver's defaults
            if cur_rate:
                cur_rate["leaves"] = {n: dict(LEAF_DEFAULTS) for n in range(t_n)}
        else:
            have_vfs = dict(before["vfs"])
        if esw_have != esw_want:
            out.append(eswitch.step(dev, esw_have, esw_want))
        rp = rate_layer.RatePlan(dev, cur_rate, target.get("rate"),
                                 copy.deepcopy(before.get("line")) if self.line else None,
                                 target.get("line") if self.line else None)
        late = []
        for n in sorted(target["vfs"]):
            have, want = have_vfs.get(n, VF_DEFAULTS), target["vfs"][n]
            rated = want["min_tx_rate"] is not None and have.get("min_tx_rate") is not None
            if rated and rp.moves(n) and have["min_tx_rate"]:
                # Its guarantee leaves the old parent before the move, and
                # comes back under the new one in the grow phase.
                mid = dict(want, min_tx_rate=0)
                s = vfs.step(pf, n, have, mid)
                out.append(s)
                late.append((n, vfs.apply_vf(have, mid), want))
            elif rated and want["min_tx_rate"] > have["min_tx_rate"]:
                late.append((n, have, want))
            else:
                s = vfs.step(pf, n, have, want)
                if s:
                    out.append(s)
        out += rp.shrink()
        out += rp.structure()
        out += rp.grow()
        for n, have, want in late:
            s = vfs.step(pf, n, have, want)
            if s:
                out.append(s)
        if self.flower and target.get("flower") is not None:
            out += flower_layer.steps(self.where, flower_have, target["flower"], self.skip_sw, Step)
        if self.dcb and target.get("dcb") is not None:
            out += dcb_layer.steps(pf, before["dcb"], target["dcb"])
        if self.networks and target.get("networks") is not None:
            out += network_layer.steps(self.networks, pf, nets_have, target["networks"],
                                       self._foreign, self.refuse_in_use, Step, uuids)
        return out


MODELS = {"pf": lambda scope: PfHost(scope["pf"], scope.get("rate", False),
                                     scope.get("line", False), scope.get("dcb", ()),
                                     scope.get("eswitch", False), scope.get("flower", False),
                                     scope.get("skip_sw", True), scope.get("networks"))}


def model_from(kind, scope):
    """The host model a journal or snapshot file names."""
    if kind not in MODELS:
        raise ValueError(f"unknown host model {kind!r}")
    return MODELS[kind](scope)
