"""The vfs layer: each VF's settings through the PF, `ip link set PF vf N
mac/vlan+qos/spoofchk/trust/state/min+max_tx_rate`, read back from
`ip -j -d link show dev PF` (live.parse_ip_link_vfs). A VF's tx_share and
tx_max as a devlink rate leaf are these rates (rate.py never sets them).
"""
from . import live
from .actions import Step, argv_action

# What a VF looks like when nobody configured it (the PF driver's defaults, as
# `ip -d link show` prints them on a fresh VF; tests/lab/test_vf_config.py).
VF_DEFAULTS = {"mac": "00:00:00:00:00:00", "vlan": 0, "qos": 0, "spoofchk": True,
               "trust": False, "link_state": "auto", "max_tx_rate": 0, "min_tx_rate": 0}

VF_PROPS = ("mac", "vlan", "qos", "spoofchk", "trust", "link_state", "max_tx_rate", "min_tx_rate")
# Properties the kernel takes together: a port VLAN with its priority
# (IFLA_VF_VLAN), and both rates (IFLA_VF_RATE: the driver checks min <= max
# on the pair, so setting one alone could be refused on the way).
VF_GROUPS = ({"vlan", "qos"}, {"min_tx_rate", "max_tx_rate"})


def fmt(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


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


def apply_vf(have, want):
    """A VF's settings after an `ip link set` from have towards want."""
    out = dict(have)
    for p in vf_changed(have, want):
        out[p] = want[p]
    return out


def read(runner, pf):
    return live.read_ip_link_vfs(runner, pf)


def target(desired):
    return {n: {p: vf[p] for p in VF_PROPS} for n, vf in desired["vfs"].items()}


def step(pf, n, have, want):
    """The step setting VF n from have to want, or None when nothing differs."""
    changed = vf_changed(have, want)
    if not changed:
        return None
    do = {p: want[p] for p in changed}
    undo = {p: have[p] for p in changed}
    summary = ", ".join(f"{p}: {fmt(have[p])} -> {fmt(want[p])}"
                        for p in VF_PROPS if p in changed and have[p] != want[p])
    base = ["ip", "link", "set", "dev", pf, "vf", n]
    return Step("vfs", f"{pf} vf {n}", summary,
                [argv_action(base + vf_args(do))], [argv_action(base + vf_args(undo))])


def restore(pf, vfs):
    """Actions giving freshly created VFs (at the driver's defaults) the
    settings in vfs."""
    acts = []
    for n in sorted(vfs):
        s = step(pf, n, VF_DEFAULTS, vfs[n])
        if s:
            acts += s.do
    return acts
