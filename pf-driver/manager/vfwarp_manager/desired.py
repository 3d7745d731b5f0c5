"""Compile a validated Policy into the desired state of each layer, in the
units of the interface that will hold it. Every object carries its owner so
an apply knows what it may change or remove and never touches the rest:

  layer        object                          owned when
  sriov        PF sriov_numvfs                 the host file names the PF
  eswitch      devlink eswitch mode            the host file names the PF
  vfs          ip link set PF vf N ...         every VF of that PF (free VFs go back to defaults)
  rate_nodes   devlink rate node vfw-TENANT    its name starts with NODE_PREFIX
  rate_leaves  devlink rate leaf parent        the VF belongs to a tenant with a rate node
  flower       tc flower on the VF representor an action cookie starts with COOKIE_MAGIC
  dcb          dcb ets / app on the PF         the host file has traffic_classes/dscp_prio
  networks     libvirt network vfwarp-TENANT   its name starts with NETWORK_PREFIX and its
                                               metadata carries NETWORK_META_NS
  quotas       RDMA quotas per VF              pending: the device's quota command
"""
import hashlib

from . import policy as pol
from .units import format_mac

NODE_PREFIX = "vfw-"
NETWORK_PREFIX = "vfwarp-"
NETWORK_META_NS = "urn:vfwarp:manager:1"
COOKIE_MAGIC = "76667701"        # 'vfw' 0x01: tc action cookies vfwarpctl owns
FLOWER_PREF_BASE = 1000          # rule k of a tenant is pref FLOWER_PREF_BASE + k

# What a VF looks like when nobody configured it (the PF driver's defaults, as
# `ip -d link show` prints them on a fresh VF; tests/lab/test_vf_config.py).
VF_DEFAULTS = {"mac": "00:00:00:00:00:00", "vlan": 0, "qos": 0, "spoofchk": True,
               "trust": False, "link_state": "auto", "max_tx_rate": 0, "min_tx_rate": 0}


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
        "flower": [],
        "dcb": _dcb(h),
        "networks": {},
        "quotas": {},
    }
    for n in range(h["adapter"]["num_vfs"]):
        out["vfs"][n] = dict(VF_DEFAULTS, owner="pool")
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
        if d["rate"]:
            node = NODE_PREFIX + t.name
            r = d["rate"]
            out["rate_nodes"][node] = {
                "tx_share": (r["tx_share"] or 0) // 8, "tx_max": (r["tx_max"] or 0) // 8,
                "tx_priority": r["tx_priority"] or 0, "tx_weight": r["tx_weight"] or 0, "owner": owner}
            for n in t.vfs:
                out["rate_leaves"][n] = {"parent": node, "owner": owner}
        for i, rule in enumerate(d["acl"] or []):
            plain = {k: (str(v) if v is not None and k in ("src", "dst") else v) for k, v in rule.items()}
            for n in t.vfs:
                out["flower"].append({"vf": n, "pref": FLOWER_PREF_BASE + i, "rule": plain,
                                      "cookie": cookie(t.name, i, plain), "owner": owner})
        out["networks"][NETWORK_PREFIX + t.name] = {
            "forward": "hostdev", "vfs": list(t.vfs), "vlan": d["vlan"], "owner": owner}
        q = (d["rdma"] or {}).get("quotas")
        if q:
            for n in t.vfs:
                out["quotas"][n] = {k: v for k, v in q.items() if v is not None}
    return out


def _dcb(h):
    if not h["traffic_classes"] and not h["dscp_prio"]:
        return None                 # the host file does not own DCB: leave it alone
    tcs = h["traffic_classes"] or []
    return {
        "tc_tsa": {c["tc"]: c["tsa"] for c in tcs},
        "tc_bw": {c["tc"]: c["bandwidth"] or 0 for c in tcs},
        "prio_tc": dict(enumerate(h["prio_tc"])) if h["prio_tc"] else None,
        "dscp_prio": {e["dscp"]: e["priority"] for e in h["dscp_prio"] or []},
    }
