"""Compile a validated Policy into the desired state of each layer, in the
units of the interface that will hold it. Every object carries its owner so
an apply knows what it may change or remove and never touches the rest:

  layer        object                          owned when
  sriov        PF sriov_numvfs                 the host file names the PF
  eswitch      devlink eswitch mode            the host file names the PF
  vfs          ip link set PF vf N ...         every VF of that PF (free VFs go back to defaults)
  rate_nodes   devlink rate node vfw-TENANT    its name starts with NODE_PREFIX
  rate_leaves  devlink rate leaf parent,       every VF of the PF (as for `ip link`: a VF no
               tx_weight, tx_priority          tenant has is at the root, weight and priority 0);
                                               its tx_share/tx_max are the VF's ip link rates
  line         devlink param line_rate_kbps    the host file says enforce_line_rate: true
  flower       tc flower on the VF representors an action cookie starts with COOKIE_MAGIC
  dcb          dcb ets, maxrate, app dscp-prio, the host file has traffic_classes (ets,
               apptrust on the PF              maxrate), dscp_prio (the DSCP table), apptrust
  networks     libvirt network vfwarp-TENANT   its name starts with NETWORK_PREFIX and its
                                               metadata carries NETWORK_META_NS
  quotas       RDMA quotas per VF              pending: the device's quota command
"""
import hashlib

from ..policy import validate as pol
from ..policy.units import format_mac
# Each layer owns the names of its objects and its defaults (the prefixes,
# the cookie magic, a VF's and a leaf's state when nobody configured it);
# the compiled state uses them from there.
from .flower import COOKIE_MAGIC, FLOWER_PREF_BASE, compile_rule  # noqa: F401
from .network import NETWORK_META_NS, NETWORK_PREFIX  # noqa: F401
from .rate import LEAF_DEFAULTS, NODE_PREFIX
from .vfs import VF_DEFAULTS


def cookie(tenant, index, rule):
    """16-byte tc action cookie (hex): magic, tenant, rule number, rule content.
    The content hash makes an edited rule a different object."""
    t = hashlib.blake2b(tenant.encode(), digest_size=5).hexdigest()
    c = hashlib.blake2b(repr(sorted(rule.items())).encode(), digest_size=5).hexdigest()
    return f"{COOKIE_MAGIC}{t}{index:04x}{c}"   # 4+5+2+5 bytes


def compile_policy(p):
    h = p.host.data
    out = {
        "pf": p.pf,
        "sriov": {"numvfs": h["adapter"]["num_vfs"]},
        "eswitch": {"mode": h["adapter"]["eswitch_mode"]},
        "vfs": {},
        "rate_nodes": {},
        "rate_leaves": {},
        "line": {"kbps": h["adapter"]["line_rate"] // 1000} if h["adapter"]["enforce_line_rate"]
        else None,
        "flower": {},            # {vf: {pref: filter}} (flower.py)
        "dcb": _dcb(h),
        "networks": {},
        "quotas": {},
    }
    for n in range(h["adapter"]["num_vfs"]):
        out["vfs"][n] = dict(VF_DEFAULTS, owner="pool")
        out["rate_leaves"][n] = dict(LEAF_DEFAULTS, owner="pool")
    for t in p.tenants:
        d = t.data
        owner = f"tenant/{t.name}"
        for k, n in enumerate(t.vfs):
            s = pol.vf_settings(t, k, n)
            vf = dict(VF_DEFAULTS, owner=owner)
            # A tenant without MACs leaves them to whoever attaches the VF
            # (libvirt sets the domain's MAC on a hostdev network attach).
            vf["mac"] = format_mac(s["mac"]) if s["mac"] is not None else None
            vf.update(vlan=s["vlan"], qos=s["qos"], spoofchk=s["spoofchk"], trust=s["trust"],
                      link_state=s["link_state"],
                      max_tx_rate=(s["tx_max"] or 0) // 10**6, min_tx_rate=(s["tx_share"] or 0) // 10**6)
            out["vfs"][n] = vf
            out["rate_leaves"][n] = {"parent": NODE_PREFIX + t.name if d["rate"] else "",
                                     "tx_weight": s["tx_weight"] or 0,
                                     "tx_priority": s["tx_priority"] or 0, "owner": owner}
        if d["rate"]:
            node = NODE_PREFIX + t.name
            r = d["rate"]
            out["rate_nodes"][node] = {
                "tx_share": (r["tx_share"] or 0) // 8, "tx_max": (r["tx_max"] or 0) // 8,
                "tx_priority": r["tx_priority"] or 0, "tx_weight": r["tx_weight"] or 0,
                "parent": "", "owner": owner}
        for i, rule in enumerate(d["acl"] or []):
            plain = {k: (str(v) if v is not None and k in ("src", "dst") else v) for k, v in rule.items()}
            for pref, f in compile_rule(i, plain, cookie(t.name, i, plain)).items():
                for n in t.vfs:
                    out["flower"].setdefault(n, {})[pref] = dict(f, owner=owner)
        out["networks"][NETWORK_PREFIX + t.name] = {
            "forward": "hostdev", "vfs": list(t.vfs), "vlan": d["vlan"], "owner": owner}
        q = (d["rdma"] or {}).get("quotas")
        if q:
            for n in t.vfs:
                out["quotas"][n] = {k: v for k, v in q.items() if v is not None}
    return out


def _dcb(h):
    """What the host file says of DCB, each part None when the file does not
    own it (then it is left alone). Classes the file does not list are ETS
    at 0% without a maxrate: nothing maps to them (prio-tc-undefined)."""
    tcs = {c["tc"]: c for c in h["traffic_classes"] or []}
    out = {"tc_tsa": None, "tc_bw": None, "prio_tc": None, "maxrate": None, "dscp_prio": None,
           "apptrust": None}
    if tcs:
        out["tc_tsa"] = [tcs[t]["tsa"] if t in tcs else "ets" for t in range(8)]
        out["tc_bw"] = [(tcs[t]["bandwidth"] or 0) if t in tcs else 0 for t in range(8)]
        out["maxrate"] = [(tcs[t]["maxrate"] or 0) // 1000 if t in tcs else 0 for t in range(8)]
    if h["prio_tc"]:
        out["prio_tc"] = list(h["prio_tc"])
    if h["dscp_prio"]:
        out["dscp_prio"] = {e["dscp"]: e["priority"] for e in h["dscp_prio"]}
    if h["apptrust"]:
        out["apptrust"] = [h["apptrust"]]
    return out if any(v is not None for v in out.values()) else None
