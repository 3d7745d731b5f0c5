"""The DCB layer of a PF netdev, through iproute2's dcb: ETS (tc-tsa, tc-bw,
prio-tc), maxrate, the app table's DSCP entries and apptrust. The host file
owns each part it writes (desired._dcb); parts it leaves out are not read
and not changed. DCB has no ordering constraint with the rate tree (the
device checks no guarantee against a class), so its steps come after it.

`dcb maxrate` units: dcbnl's tc_maxrate is kbit/s, and the dcb releases in
live.DCB_MAXRATE_VERBATIM pass the number they parse on unconverted, so
N kbit/s is written `T:Nbps`; live.check_dcb_maxrate_units refuses other
releases before anything is read or written.
"""
from . import live
from .actions import Step, argv_action

ETS_KEYS = ("tc_tsa", "tc_bw", "prio_tc")
PARTS = {"ets": ETS_KEYS, "maxrate": ("maxrate",), "app": ("dscp_prio",), "apptrust": ("apptrust",)}


def parts(dcb):
    """The parts of DCB a desired dcb state owns, e.g. ['ets', 'app']."""
    if not dcb:
        return []
    return [p for p, keys in PARTS.items() if any(dcb.get(k) is not None for k in keys)]


def read(runner, pf, owned):
    """The parts the host file owns, as the driver reports them."""
    return live.read_dcb(runner, pf, owned)


def target(dcb, owned):
    return {k: dcb.get(k) for p in owned for k in PARTS[p]}


def _map(vals, fmt=str):
    return [f"{i}:{fmt(v)}" for i, v in enumerate(vals)]


def _ets_argv(pf, st):
    a = ["dcb", "ets", "set", "dev", pf]
    if st.get("tc_tsa") is not None:
        a += ["tc-tsa"] + _map(st["tc_tsa"]) + ["tc-bw"] + _map(st["tc_bw"])
    if st.get("prio_tc") is not None:
        a += ["prio-tc"] + _map(st["prio_tc"])
    return a


def _maxrate_argv(pf, kbps):
    return ["dcb", "maxrate", "set", "dev", pf, "tc-maxrate"] + \
        _map(kbps, lambda k: f"{k}bps" if k else "0")


def _entries(d, p):
    return [f"{d}:{x}" for x in (p if isinstance(p, list) else [p])]


def steps(pf, have, want):
    out = []
    if any(want.get(k) is not None and want[k] != have.get(k) for k in ETS_KEYS):
        keys = [k for k in ETS_KEYS if want.get(k) is not None]
        w = {k: want[k] for k in keys}
        h = {k: have[k] for k in keys}
        if "tc_tsa" in w:       # shares are checked with the TSAs: always both
            w["tc_bw"], h["tc_bw"] = want["tc_bw"], have["tc_bw"]
        out.append(Step("dcb", f"{pf} ets", ", ".join(f"{k}: {h[k]} -> {w[k]}" for k in keys
                                                      if h[k] != w[k]),
                        [argv_action(_ets_argv(pf, w))], [argv_action(_ets_argv(pf, h))]))
    if want.get("maxrate") is not None and want["maxrate"] != have["maxrate"]:
        out.append(Step("dcb", f"{pf} maxrate", f"tc_maxrate kbit/s: {have['maxrate']} -> "
                        f"{want['maxrate']}", [argv_action(_maxrate_argv(pf, want["maxrate"]))],
                        [argv_action(_maxrate_argv(pf, have["maxrate"]))]))
    if want.get("dscp_prio") is not None and want["dscp_prio"] != have["dscp_prio"]:
        h, w = have["dscp_prio"], want["dscp_prio"]
        gone = [e for d in sorted(h) if h[d] != w.get(d) for e in _entries(d, h[d])]
        new = [e for d in sorted(w) if w[d] != h.get(d) for e in _entries(d, w[d])]
        app = ["dcb", "app", "{}", "dev", pf, "dscp-prio"]
        act = lambda op, es: [argv_action([op if a == "{}" else a for a in app] + es)] if es else []  # noqa: E731
        summary = ", ".join(f"dscp {d}: {h.get(d, '-')} -> {w.get(d, '-')}"
                            for d in sorted(set(h) | set(w)) if h.get(d) != w.get(d))
        # Old entries out first: a driver may keep one priority per DSCP.
        out.append(Step("dcb", f"{pf} app", summary, act("del", gone) + act("add", new),
                        act("del", new) + act("add", gone)))
    if want.get("apptrust") is not None and want["apptrust"] != have["apptrust"]:
        base = ["dcb", "apptrust", "set", "dev", pf, "order"]
        out.append(Step("dcb", f"{pf} apptrust", f"order: {' '.join(have['apptrust']) or '(none)'}"
                        f" -> {' '.join(want['apptrust'])}", [argv_action(base + want["apptrust"])],
                        [argv_action(base + have["apptrust"])]))
    return out
