"""The tc flower layer: a tenant's ACL rules as flower filters on the
ingress of each of its VFs' representors (what the VF sends: the PF
driver offloads that block, docs/switchdev.md), in the rules' order.

Compilation (compile_rule): one rule gives one filter, or two when it names
neither an address family nor a subnet but an L4 protocol (tcp, udp, icmp:
one filter per family, since a flower filter matches one ethertype). Rule k
of a tenant is pref PREF_BASE + 2k, its IPv6 twin PREF_BASE + 2k + 1, so
the rules' order is the filters' order. Actions: allow = gact pass, deny =
gact drop, police = police rate R burst B conform-exceed drop/pipe, mirror =
mirred egress mirror to the representor of the target VF.

Ownership: every filter carries its rule's cookie (desired.cookie, on its
one action, read back in `tc -j filter show`); filters whose action cookie
does not start with COOKIE_MAGIC are never read, changed or removed.

State of a VF (read back from the kernel, never remembered; a match the
filter does not have is '' or [], so that one added by hand differs):
  {pref: {protocol, handle, chain, ip_proto, src, dst, dst_port, action,
          mirror_vf, _police, cookie, skip_sw, in_hw, other_keys}}
`_police` ({rate bytes/s, burst bytes}) is parsed from tc's text output: tc
prints a police action's rate and burst there only (not in -j), rounded to
its units, so it serves to re-create a removed filter on undo and is not
compared (keys starting with '_' never are: host.mismatches); the cookie
covers the rule's content, police values included. Only VFs with a representor have a flower state.

Actions are resolved when they run (run_flower): a representor is named by
its VF, and exists only in switchdev mode (it may appear in the same
apply, after the eswitch step); a filter is added only after an ingress
qdisc exists on the representor (clsact is added when there is none, and
left in place: it holds no policy).

Offload: the host model adds `skip_sw` (scope `skip_sw`, default true), so
a filter the adapter cannot hold is refused by the kernel instead of
running in software. Tests on a kernel without the hardware run the same
filters without it (tests/flowerhost.py; VFWARP_FLOWER_SOFTWARE=1).
"""
import ipaddress
import json
import re

from ..runner import ToolError

COOKIE_MAGIC = "76667701"        # 'vfw' 0x01: tc action cookies vfwarpctl owns
FLOWER_PREF_BASE = 1000          # rule k of a tenant: pref FLOWER_PREF_BASE + 2k (+1: its IPv6 twin)

KNOWN_KEYS = {"eth_type", "ip_proto", "src_ip", "dst_ip", "dst_port"}
FAMILY_PROTO = {4: "ip", 6: "ipv6", None: "all"}
ETH_TYPE = {"ip": "ipv4", "ipv6": "ipv6"}
ACTION = {"allow": "pass", "deny": "drop", "police": "police", "mirror": "mirror"}


def prefs(k, twin):
    return FLOWER_PREF_BASE + 2 * k + (1 if twin else 0)


def _net(text):
    """A subnet as tc prints it ('10.0.0.1' for a /32) -> '10.0.0.1/32'; '' for none."""
    return str(ipaddress.ip_network(text, strict=False)) if text else ""


def compile_rule(k, rule, cookie, own_vfs=None):
    """{pref: filter} of tenant rule k (a plain dict: action, protocol, src,
    dst as strings, dst_port (lo, hi), police, mirror_to)."""
    proto = rule["protocol"]
    fams = {ipaddress.ip_network(rule[s]).version for s in ("src", "dst") if rule.get(s)}
    fam = fams.pop() if fams else {"ipv4": 4, "ipv6": 6}.get(proto)
    if fam is None and proto in ("tcp", "udp", "icmp"):
        families = [4, 6]
    else:
        families = [fam]
    out = {}
    for i, f in enumerate(families):
        ip_proto = ""
        if proto in ("tcp", "udp"):
            ip_proto = proto
        elif proto == "icmp":
            ip_proto = "icmp" if f == 4 else "icmpv6"
        dp = rule.get("dst_port")
        police = rule.get("police")
        out[prefs(k, i == 1)] = {
            "protocol": FAMILY_PROTO[f], "handle": None, "chain": 0, "ip_proto": ip_proto,
            "src": _net(rule.get("src")), "dst": _net(rule.get("dst")),
            "dst_port": list(dp) if dp else [],
            "action": ACTION[rule["action"]],
            "mirror_vf": rule["mirror_to"] if rule.get("mirror_to") is not None else "",
            "_police": {"rate": police["rate"] // 8, "burst": police["burst"]} if police else None,
            "cookie": cookie, "skip_sw": None, "in_hw": None, "other_keys": []}
    return out


def target_filter(f, skip_sw):
    """A compiled filter as the read-back must show it: offloaded when
    skip_sw (its _police is carried for creating it, not compared)."""
    return dict(f, skip_sw=skip_sw, in_hw=True if skip_sw else None)


# ---- reading ----------------------------------------------------------------

def parse_filters(doc, vf_of_dev):
    """`tc -j filter show dev R ingress` -> {pref: filter} of the owned ones.
    vf_of_dev: {netdev name: VF number} for mirror targets. A second owned
    filter at one pref is listed under 'pref/handle', which no target has,
    so it is removed."""
    if doc is None:
        return {}
    if not isinstance(doc, list):
        raise ValueError(f"tc filter show: expected a list, got {type(doc).__name__}")
    out = {}
    for e in doc:
        o = e.get("options") if isinstance(e, dict) else None
        if not isinstance(o, dict) or e.get("kind") != "flower":
            continue
        acts = o.get("actions") or []
        if not any(str(a.get("cookie", "")).startswith(COOKIE_MAGIC) for a in acts):
            continue                                  # not ours: never touched
        keys = o.get("keys") or {}
        dp = keys.get("dst_port")
        if isinstance(dp, dict):
            dp = [int(dp["start"]), int(dp["end"])]
        elif dp is not None:
            dp = [int(dp), int(dp)]
        else:
            dp = []
        f = {"protocol": e.get("protocol"), "handle": o.get("handle"), "chain": e.get("chain", 0),
             "ip_proto": keys.get("ip_proto") or "", "src": _net(keys.get("src_ip")),
             "dst": _net(keys.get("dst_ip")), "dst_port": dp, "action": None, "mirror_vf": "",
             "_police": None, "cookie": next(a["cookie"] for a in acts
                                            if str(a.get("cookie", "")).startswith(COOKIE_MAGIC)),
             "skip_sw": bool(o.get("skip_sw")), "in_hw": bool(o.get("in_hw")),
             "other_keys": sorted(set(keys) - KNOWN_KEYS)}
        if len(acts) == 1:
            a = acts[0]
            kind = a.get("kind")
            if kind == "gact":
                t = (a.get("control_action") or {}).get("type")
                f["action"] = {"drop": "drop", "pass": "pass"}.get(t, f"gact {t}")
            elif kind == "mirred" and a.get("mirred_action") == "mirror":
                f["action"] = "mirror"
                f["mirror_vf"] = vf_of_dev.get(a.get("to_dev"), a.get("to_dev"))
            elif kind == "police":
                f["action"] = "police"
            else:
                f["action"] = str(kind)
        else:
            f["action"] = "+".join(str(a.get("kind")) for a in acts)
        key = int(e["pref"])
        if key in out:
            key = f"{key}/{f['handle']}"
        out[key] = f
    return out


_RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12}
_SIZE_UNITS = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}


def parse_police_text(text):
    """{(pref, handle): {rate bytes/s, burst bytes}} from `tc filter show
    dev R ingress` (text): tc prints a police action's rate and burst only
    there, in its units (`rate 100Mbit burst 64Kb`)."""
    out = {}
    for block in re.split(r"\n(?=filter )", "\n" + text):
        mp = re.search(r"\bpref (\d+)\b", block)
        mh = re.search(r"\bhandle (0x[0-9a-f]+)\b", block)
        mr = re.search(r"\bpolice 0x[0-9a-f]+ rate ([0-9.]+)([A-Za-z]+) burst ([0-9.]+)([A-Za-z]+)", block)
        if not (mp and mh and mr):
            continue
        rate = float(mr.group(1)) * _RATE_UNITS[mr.group(2).lower()]
        burst = float(mr.group(3)) * _SIZE_UNITS[mr.group(4).lower()]
        out[(int(mp.group(1)), int(mh.group(1), 16))] = {"rate": int(rate) // 8, "burst": int(burst)}
    return out


def _live_error(msg):
    from .live import LiveError          # a step's failure the transaction undoes
    return LiveError(msg)


def tc_base(netns):
    return ["tc"] + (["-n", netns] if netns else [])


def read_dev(runner, dev, netns, vf_of_dev):
    """Owned filters on one representor's ingress."""
    from .live import LiveError, _json
    doc = _json(runner, tc_base(netns) + ["-j", "filter", "show", "dev", dev, "ingress"])
    try:
        filters = parse_filters(doc, vf_of_dev)
        if any(f["action"] == "police" for f in filters.values()):
            police = parse_police_text(runner.check(tc_base(netns) + ["filter", "show", "dev", dev,
                                                                      "ingress"]))
            for key, f in filters.items():
                if f["action"] == "police":
                    f["_police"] = police.get((int(str(key).split("/")[0]), f["handle"]))
        return filters
    except ToolError as e:
        raise LiveError(str(e)) from None
    except (ValueError, KeyError, TypeError) as e:
        raise LiveError(f"tc filter show dev {dev} ingress: unexpected output: {e}") from None


# ---- steps ------------------------------------------------------------------

def read(runner, dev):
    """{vf: {pref: filter}}: the owned filters of each VF's representor of
    the devlink instance dev (VFs without one, or without owned filters,
    are left out)."""
    from . import live
    reprs = live.read_vf_reprs(runner, dev)
    by_name = {name: vf for vf, name in reprs.items()}
    out = {}
    for vf, name in sorted(reprs.items()):
        fs = read_dev(runner, name, None, by_name)
        if fs:
            out[vf] = fs
    return out


def target(desired, skip_sw):
    """The filters of a desired state (desired.py), owners dropped."""
    return {vf: {p: target_filter({k: v for k, v in f.items() if k != "owner"}, skip_sw)
                 for p, f in fs.items()}
            for vf, fs in desired["flower"].items()}


def _describe(f):
    m = [f["protocol"]]
    for k in ("ip_proto", "src", "dst"):
        if f.get(k):
            m.append(f"{k} {f[k]}")
    if f.get("dst_port"):
        lo, hi = f["dst_port"]
        m.append(f"dst_port {lo}" + (f"-{hi}" if hi != lo else ""))
    if f.get("other_keys"):
        m.append("+" + ",".join(f["other_keys"]))        # matches no rule has: edited by hand
    if f.get("skip_sw") is False and f.get("in_hw") is not None:
        m.append("(software)")
    act = f["action"] if f["action"] != "mirror" else f"mirror to vf {f['mirror_vf']}"
    if f["action"] == "police" and f.get("_police"):
        act += f" {f['_police']['rate'] * 8}bit burst {f['_police']['burst']}"
    return " ".join(m) + f": {act}"


def describe(f):
    return _describe(f)


def add_action(where, vf, pref, f, skip_sw):
    """An action adding filter f at pref on VF vf's representor (where:
    {dev, netns, reprs}: how to find it, see run_flower)."""
    return {"flower": "add", "where": where, "vf": vf, "pref": int(pref), "filter": f,
            "skip_sw": bool(skip_sw)}


def del_action(where, vf, pref, f):
    return {"flower": "del", "where": where, "vf": vf, "pref": int(pref),
            "filter": {"protocol": f["protocol"], "handle": f.get("handle") or 1}}


def add_argv(base, dev, pref, f, skip_sw, repr_of):
    a = base + ["filter", "add", "dev", dev, "ingress", "protocol", f["protocol"], "pref", str(pref),
                "handle", str(f.get("handle") or 1), "flower"]
    if skip_sw:
        a.append("skip_sw")
    if f.get("ip_proto"):
        a += ["ip_proto", f["ip_proto"]]
    if f.get("src"):
        a += ["src_ip", f["src"]]
    if f.get("dst"):
        a += ["dst_ip", f["dst"]]
    if f.get("dst_port"):
        lo, hi = f["dst_port"]
        a += ["dst_port", str(lo) if lo == hi else f"{lo}-{hi}"]
    a.append("action")
    if f["action"] in ("pass", "drop"):
        a.append(f["action"])
    elif f["action"] == "mirror":
        a += ["mirred", "egress", "mirror", "dev", repr_of(f["mirror_vf"])]
    elif f["action"] == "police":
        p = f["_police"]
        if p is None:
            raise _live_error("cannot re-create a police filter: its rate and burst were not read")
        a += ["police", "rate", f"{p['rate'] * 8}bit", "burst", str(p["burst"]),
              "conform-exceed", "drop/pipe"]
    else:
        raise _live_error(f"cannot re-create a filter with action {f['action']!r}")
    return a + ["cookie", f["cookie"]]


def del_argv(base, dev, pref, f):
    return base + ["filter", "del", "dev", dev, "ingress", "protocol", f["protocol"], "pref", str(pref),
                   "handle", str(f["handle"]), "flower"]


def has_ingress_qdisc(runner, base, dev):
    doc = json.loads(runner.check(base + ["-j", "qdisc", "show", "dev", dev]) or "[]")
    return any(q.get("kind") in ("clsact", "ingress") for q in doc)


def reprs_of(runner, where):
    """{VF: representor name}: given (tests), or the VF ports' netdevs in
    devlink, once udev has named them (a representor created by the step
    before is renamed by udev from its devlink port, asynchronously)."""
    if where.get("reprs") is not None:
        return {int(k): v for k, v in where["reprs"].items()}
    from . import live
    try:
        runner.run(["udevadm", "settle", "-t", "20"])
    except (OSError, ValueError):
        pass                      # no udev: names are the kernel's, final at once
    return live.read_vf_reprs(runner, where["dev"])


def run_flower(runner, action, reprs_of):
    """Run a flower action; reprs_of(where) -> {VF: representor name} (looked
    up now: representors come and go with the eswitch mode and the VFs)."""
    where = action["where"]
    base = tc_base(where.get("netns"))
    reprs = reprs_of(where)

    def repr_of(vf):
        if vf not in reprs:
            from .live import LiveError
            raise LiveError(f"VF {vf} has no representor (eswitch mode not switchdev?)")
        return reprs[vf]

    dev = repr_of(action["vf"])
    pref = str(action["pref"]).split("/")[0]
    if action["flower"] == "add":
        if not has_ingress_qdisc(runner, base, dev):
            runner.check(base + ["qdisc", "add", "dev", dev, "clsact"])
        runner.check(add_argv(base, dev, pref, action["filter"], action["skip_sw"], repr_of))
    else:
        try:
            runner.check(del_argv(base, dev, pref, action["filter"]))
        except ToolError:
            # Gone already (deleted by hand, or with its representor): the
            # read-back that follows tells whether the state is right.
            if _present(runner, base, dev, pref, action["filter"]):
                raise


def _present(runner, base, dev, pref, f):
    out = runner.check(base + ["-j", "filter", "show", "dev", dev, "ingress"])
    for e in json.loads(out) if out.strip() else []:
        if str(e.get("pref")) == str(pref) and (e.get("options") or {}).get("handle") == f["handle"]:
            return True
    return False


def steps(where, before, target, skip_sw, Step):
    """Steps turning the owned filters `before` ({vf: {pref: filter}}) into
    `target`: for each VF, filters that differ or go are deleted (last pref
    first), then the missing ones added in pref order. The undo of a
    deletion re-creates the filter as read; that of an addition deletes it."""
    out = []
    for vf in sorted(set(before) | set(target)):
        have, want = before.get(vf, {}), target.get(vf, {})
        gone = [p for p in have if p not in want or _differs(have[p], want[p])]
        new = [p for p in want if p not in have or _differs(have[p], want[p])]
        for p in sorted(gone, key=lambda x: str(x), reverse=True):
            f = have[p]
            out.append(Step("flower", f"vf {vf} pref {p}", f"remove: {_describe(f)}",
                            [del_action(where, vf, p, f)],
                            [add_action(where, vf, p, f, f["skip_sw"])]))
        for p in sorted(new):
            f = dict(want[p], handle=1)
            out.append(Step("flower", f"vf {vf} pref {p}", f"add: {_describe(f)}",
                            [add_action(where, vf, p, f, skip_sw)],
                            [del_action(where, vf, p, f)]))
    return out


def differs(have, want):
    """Whether a filter read back differs from the one wanted (None in
    want: not compared)."""
    return _differs(have, want)


def _differs(have, want):
    return any(want[k] is not None and not k.startswith("_") and have.get(k) != want[k] for k in want)
