"""Plan: the difference between the live host and the desired state, one
line per property, each labelled with what applying it does to a VM using
the VF. Labels, from least to most disruptive:

  hitless   nothing a VM notices (rates, spoof check, link state, rate tree, rules)
  vf-reset  the PF driver resets the VF (port VLAN/qos and trust on ice, i40e):
            the guest's driver re-initialises, connections survive a short outage
  detach    the VF must be detached from its VM first (its MAC: the guest and
            libvirt hold the old one)
  recreate  every VF is destroyed and created again (sriov_numvfs N -> M with
            N, M > 0, which the PCI core refuses without going through 0;
            an eswitch mode change)
"""
from dataclasses import asdict, dataclass
from typing import Any

from . import live as lv
from .desired import NODE_PREFIX, VF_DEFAULTS
from .runner import Runner

DISRUPTION_ORDER = ("hitless", "vf-reset", "detach", "recreate")
VF_PROP_DISRUPTION = {"mac": "detach", "vlan": "vf-reset", "qos": "vf-reset", "trust": "vf-reset",
                      "spoofchk": "hitless", "link_state": "hitless",
                      "max_tx_rate": "hitless", "min_tx_rate": "hitless"}


@dataclass(frozen=True)
class Change:
    layer: str
    obj: str
    prop: str
    live: Any
    desired: Any
    disruption: str

    @property
    def action(self):
        return "add" if self.live is None else "remove" if self.desired is None else "change"

    def __str__(self):
        sym = {"add": "+", "remove": "-", "change": "~"}[self.action]
        fmt = lambda v: "(none)" if v is None else str(v).lower() if isinstance(v, bool) else str(v)  # noqa: E731
        return f"{sym} {self.layer} {self.obj} {self.prop}: {fmt(self.live)} -> {fmt(self.desired)}" \
               f"  [{self.disruption}]"

    def as_json(self):
        d = asdict(self)
        d["object"] = d.pop("obj")
        d["property"] = d.pop("prop")
        d["action"] = self.action
        return d


def read_live(runner: Runner, desired):
    """Live state of the layers the desired state touches. Layers that cannot be
    read are listed in 'unread' with the reason (e.g. no devlink instance)."""
    pf = desired["pf"]
    state = {"unread": {}}
    state["sriov"] = lv.read_sriov(runner, pf)
    state["vfs"] = lv.read_ip_link_vfs(runner, pf)
    want_devlink = desired["eswitch"]["mode"] != "legacy" or desired["rate_nodes"]
    try:
        dev = "pci/" + runner.link_target_name(f"{lv.SYSFS_NET}/{pf}/device")
        state["devlink_dev"] = dev
        state["eswitch"] = {"mode": lv.parse_devlink_eswitch(
            lv._json(runner, ["devlink", "-j", "dev", "eswitch", "show", dev]))}
        ports = lv.parse_devlink_vf_ports(lv._json(runner, ["devlink", "-j", "port", "show"]), dev)
        state["rate"] = lv.parse_devlink_rates(
            lv._json(runner, ["devlink", "-j", "port", "function", "rate", "show"]), dev, ports)
    except (lv.LiveError, FileNotFoundError) as e:
        state["eswitch"] = state["rate"] = None
        if want_devlink:
            state["unread"]["devlink"] = str(e)
    if desired["flower"]:
        state["unread"]["flower"] = "tc flower on representors: compiled, not yet read (issue 16)"
    if desired["dcb"]:
        state["unread"]["dcb"] = "dcb ets/app: compiled, not yet read (issue 17)"
    if desired["networks"]:
        state["unread"]["networks"] = "libvirt networks: compiled, not yet read (libvirt-python)"
    if desired["quotas"]:
        state["unread"]["quotas"] = "RDMA quotas: no host interface yet"
    return state


def diff(live, desired):
    """[Change] turning live into desired, for the layers that were read."""
    out = []
    want_n, have_n = desired["sriov"]["numvfs"], live["sriov"]["numvfs"]
    recreate = want_n != have_n
    if recreate:
        out.append(Change("sriov", desired["pf"], "sriov_numvfs", have_n, want_n,
                          "recreate" if have_n and want_n else "hitless"))
    if live.get("eswitch") and live["eswitch"]["mode"] != desired["eswitch"]["mode"]:
        out.append(Change("eswitch", live["devlink_dev"], "mode", live["eswitch"]["mode"],
                          desired["eswitch"]["mode"], "recreate"))
    for n, want in sorted(desired["vfs"].items()):
        # VFs created afresh start from the driver's defaults, whatever they had.
        have = VF_DEFAULTS if recreate else live["vfs"].get(n, VF_DEFAULTS)
        for prop, disruption in VF_PROP_DISRUPTION.items():
            w, h = want[prop], have.get(prop)
            if w is None or h is None:        # not managed / not reported by the driver
                continue
            if w != h:
                out.append(Change("vf", f"{desired['pf']} vf {n}", prop, h, w,
                                  "recreate" if recreate and have_n else disruption))
    if live.get("rate") is not None:
        out += _diff_rates(live["rate"], desired)
    return out


def _diff_rates(rate, desired):
    out = []
    have_nodes = {k: v for k, v in rate["nodes"].items() if k.startswith(NODE_PREFIX)}
    for name, want in sorted(desired["rate_nodes"].items()):
        have = have_nodes.get(name)
        for prop in ("tx_share", "tx_max", "tx_priority", "tx_weight"):
            h = None if have is None else (have.get(prop) or 0)
            if have is None or h != want[prop]:
                out.append(Change("rate-node", name, prop, h, want[prop], "hitless"))
    for name in sorted(set(have_nodes) - set(desired["rate_nodes"])):
        out.append(Change("rate-node", name, "node", name, None, "hitless"))
    for n in sorted(desired["vfs"]):
        want = desired["rate_leaves"].get(n, {}).get("parent")
        have = rate["leaves"].get(n, {}).get("parent")
        # Only parents that are ours are ours to clear.
        if want != have and (want is not None or (have or "").startswith(NODE_PREFIX)):
            out.append(Change("rate-leaf", f"vf {n}", "parent", have, want, "hitless"))
    return out


def worst(changes):
    return max((c.disruption for c in changes), key=DISRUPTION_ORDER.index, default=None)
