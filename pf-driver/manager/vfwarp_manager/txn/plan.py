"""Plan: the difference between the live host and the desired state, one
line per property, each labelled with what applying it does to a VM using
the VF. Labels, from least to most disruptive:

  hitless   nothing a VM notices (rates, spoof check, link state, rate tree, rules, DCB)
  vf-reset  the PF driver resets the VF (port VLAN/qos and trust on ice, i40e):
            the guest's driver re-initialises, connections survive a short outage
  detach    the VF must be detached from its VM first (its MAC: the guest and
            libvirt hold the old one)
  recreate  every VF is destroyed, and created again if any are wanted
            (sriov_numvfs N -> M with N > 0: the PCI core changes a non-zero
            count only through 0, so 4 -> 2 destroys all four, and 4 -> 0
            destroys them too; an eswitch mode change)
"""
from dataclasses import asdict, dataclass
from typing import Any

from ..layers import flower as flower_layer, host, network as network_layer
from ..layers import live as lv, rate as rate_layer
from ..layers.rate import LEAF_DEFAULTS
from ..layers.vfs import VF_DEFAULTS
from ..runner import Runner

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
    """Live state of the layers the desired state touches, read by the same
    host model apply uses (host.PfHost), so plan, drift and apply agree.
    Layers that cannot be read are listed in 'unread' with the reason (e.g.
    no devlink instance); '_target' is the model's target for the rest."""
    pf = desired["pf"]
    state = {"unread": {}}
    state["sriov"] = lv.read_sriov(runner, pf)
    state["vfs"] = lv.read_ip_link_vfs(runner, pf)
    model = host.PfHost.for_desired(runner, desired)
    want_devlink = desired["eswitch"]["mode"] != "legacy" or model.rate or model.line
    try:
        dev = model.dev(runner)
        state["devlink_dev"] = dev
        mode = model._take_probed("eswitch")
        state["eswitch"] = {"mode": mode or lv.parse_devlink_eswitch(
            lv._json(runner, ["devlink", "-j", "dev", "eswitch", "show", dev]))}
        state.update(model.read_devlink(runner))
    except lv.LiveError as e:
        state["eswitch"] = None
        state.pop("rate", None)
        state.pop("line", None)
        if want_devlink:
            state["unread"]["devlink"] = str(e)
    if model.flower:
        try:
            state["flower"] = model.read_flower(runner)
        except lv.LiveError as e:
            state["unread"]["flower"] = str(e)
    try:
        state.update(model.read_dcb(runner))
    except lv.LiveError as e:
        state["unread"]["dcb"] = str(e)
    state["_target"] = model.target(desired)
    if model.networks:
        try:
            state["networks"] = model.read_networks(runner)
            for n in sorted(set(desired["networks"]) & set(model._foreign)):
                state["unread"][f"networks {n}"] = (
                    "a foreign libvirt network (no vfwarpctl metadata) holds this name: apply "
                    "refuses it")
        except lv.LiveError as e:
            state["unread"]["networks"] = str(e)
    elif desired["networks"]:
        state["unread"]["networks"] = host.UNAVAILABLE["networks"]
    if desired["quotas"]:
        state["unread"]["quotas"] = "RDMA quotas: no host interface yet"
    return state


def diff(live, desired):
    """[Change] turning live into desired, for the layers that were read."""
    out = []
    want_n, have_n = desired["sriov"]["numvfs"], live["sriov"]["numvfs"]
    recreate = want_n != have_n
    if recreate:
        # Only 0 -> M is hitless (no VF existed, no VM held one); any change
        # from N > 0, to 0 included, destroys every VF a VM may hold.
        out.append(Change("sriov", desired["pf"], "sriov_numvfs", have_n, want_n,
                          "recreate" if have_n else "hitless"))
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
    target = live.get("_target") or {}
    if live.get("rate") is not None and target.get("rate") is not None:
        out += _diff_rates(live["rate"], target["rate"], recreate)
    if live.get("line") is not None and target.get("line") is not None:
        h, w = live["line"]["kbps"], target["line"]["kbps"]
        if h != w:
            out.append(Change("line", live["devlink_dev"], "line_rate_kbps", h, w, "hitless"))
    if live.get("flower") is not None and target.get("flower") is not None:
        out += _diff_flower(desired["pf"], live["flower"], target["flower"], desired["flower"])
    if live.get("dcb") is not None and target.get("dcb") is not None:
        out += _diff_dcb(desired["pf"], live["dcb"], target["dcb"])
    if live.get("networks") is not None and target.get("networks") is not None:
        out += _diff_networks(live["networks"], target["networks"])
    return out


def _diff_networks(have, want):
    """One line per property of an owned libvirt network that differs; a
    network a running domain uses is restarted by the change: detach."""
    out = []
    fmt = network_layer._fmt
    for n in sorted(set(have) | set(want)):
        h, w = have.get(n), want.get(n)
        label = "detach" if h and h["_users"] else "hitless"
        if h is None:
            out.append(Change("network", n, "network", None,
                              f"tenant {w['tenant']}, vfs {fmt(w['vfs'])}, vlan {fmt(w['vlan'])}",
                              label))
        elif w is None:
            out.append(Change("network", n, "network", f"tenant {h['tenant']}", None, label))
        else:
            for k, v in network_layer.compared(w).items():
                if h.get(k) != v:
                    out.append(Change("network", n, k, fmt(h.get(k)), fmt(v),
                                      label if k not in ("active", "autostart") else "hitless"))
    return out


def _root(parent):
    return parent or None         # the root, shown as (none)


def _diff_rates(rate, target, recreate):
    """Owned nodes and the VFs' leaves (rate hitless: nothing a VM notices)."""
    out = []
    have_nodes = rate["nodes"]
    for name, want in sorted(target["nodes"].items()):
        have = have_nodes.get(name)
        for prop in rate_layer.NODE_PROPS:
            if have is None:
                if prop != "parent":
                    out.append(Change("rate-node", name, prop, None, want[prop], "hitless"))
            elif have[prop] != want[prop]:
                f = _root if prop == "parent" else (lambda v: v)
                out.append(Change("rate-node", name, prop, f(have[prop]), f(want[prop]), "hitless"))
    for name in sorted(set(have_nodes) - set(target["nodes"])):
        out.append(Change("rate-node", name, "node", name, None, "hitless"))
    for n, want in sorted(target["leaves"].items()):
        # re-created VFs' leaves start at the defaults
        have = LEAF_DEFAULTS if recreate else rate["leaves"].get(n, LEAF_DEFAULTS)
        for prop in rate_layer.LEAF_PROPS:
            if have[prop] != want[prop]:
                f = _root if prop == "parent" else (lambda v: v)
                out.append(Change("rate-leaf", f"vf {n}", prop, f(have[prop]), f(want[prop]),
                                  "hitless"))
    return out


def _diff_flower(pf, have, want, compiled):
    """One line per filter that is missing, differs or goes (hitless: a
    rule changes what a VF may send, not the VF). Described from the
    compiled rule (the target leaves out what tc -j cannot show)."""
    out = []
    for vf in sorted(set(have) | set(want)):
        h, w = have.get(vf, {}), want.get(vf, {})
        for p in sorted(set(h) | set(w), key=str):
            hd = flower_layer.describe(h[p]) if p in h else None
            wd = flower_layer.describe(compiled[vf][p]) if p in w else None
            if p in h and p in w and not flower_layer.differs(h[p], w[p]):
                continue
            out.append(Change("flower", f"{pf} vf {vf}", f"pref {p}", hd, wd, "hitless"))
    return out


def _diff_dcb(pf, have, want):
    out = []
    for k in ("tc_tsa", "tc_bw", "prio_tc", "maxrate", "apptrust"):
        if want.get(k) is not None and have.get(k) != want[k]:
            out.append(Change("dcb", pf, k, have.get(k), want[k], "hitless"))
    if want.get("dscp_prio") is not None:
        h, w = have["dscp_prio"], want["dscp_prio"]
        for d in sorted(set(h) | set(w)):
            if h.get(d) != w.get(d):
                out.append(Change("dcb", pf, f"dscp {d}", h.get(d), w.get(d), "hitless"))
    return out


def worst(changes):
    return max((c.disruption for c in changes), key=DISRUPTION_ORDER.index, default=None)
