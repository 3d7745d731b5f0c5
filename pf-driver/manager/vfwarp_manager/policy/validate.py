"""Load and validate a set of policy files (one host file, one file per
tenant) into a Policy: per-file checks against format_v1, then the rules
that span files. Any error and nothing is returned: the caller applies
nothing (PolicyInvalid carries every error found, not just the first).
"""
import os
import stat
from dataclasses import dataclass, field

from .errors import PolicyError, PolicyInvalid, Where
from . import units
from .units import format_mac, format_rate
from .source import compose_file, is_mapping, is_scalar

POLICY_SUFFIXES = (".yaml", ".yml")


@dataclass
class FilePolicy:
    path: str
    kind: str
    data: dict
    locs: dict            # path tuple -> Where of the value
    root: Where

    def at(self, *path):
        """Where a value is, or the nearest enclosing value that is written."""
        while path and path not in self.locs:
            path = path[:-1]
        return self.locs.get(path, self.root)


@dataclass
class Tenant:
    file: FilePolicy
    name: str
    vfs: list = field(default_factory=list)      # VF numbers, in the tenant's order

    @property
    def data(self):
        return self.file.data


@dataclass
class Policy:
    host: FilePolicy
    tenants: list               # [Tenant], sorted by name
    files: list                 # every path read

    @property
    def pf(self):
        return self.host.data["adapter"]["pf"]


def expand_paths(paths):
    """Files as given; a directory stands for its *.yaml/*.yml files, sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(POLICY_SUFFIXES))
        else:
            out.append(p)
    return out


def misnamed_files(paths):
    """Files of the directories given whose names end in .yaml or .yml in
    another case (red.YAML, blue.Yml). Skipped like a README, such a file's
    tenant would be missing, and apply would remove it from the host: they
    are refused instead, by name."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, n) for n in os.listdir(p)
                          if n.lower().endswith(POLICY_SUFFIXES) and not n.endswith(POLICY_SUFFIXES))
    return out


class NotRegularFile(OSError):
    """A policy path that is a named pipe, a device, a socket or a directory."""


_FILE_TYPES = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISDIR, "a directory"))


def _check_regular(mode):
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _FILE_TYPES if test(mode)), "a special file")
        raise NotRegularFile(f"{what}, not a regular file: policy files are read from regular "
                             "files only")


def check_file(path, text):
    """(FilePolicy or None, errors) for one file, checked on its own."""
    # the format's checker is imported here: a file from the parse cache needs none
    from . import format_v1
    from .model import Context
    root, errors = compose_file(path, text)
    if root is None:
        return None, errors
    ctx = Context(path)
    if not is_mapping(root):
        ctx.error(root, "type", "a policy file is a mapping (version:, kind:, ...)")
        return None, ctx.errors
    kind_node = next((v for k, v in root.value if is_scalar(k) and k.value == "kind"), None)
    if kind_node is None:
        ctx.error(root, "missing-key", "required key 'kind' is missing (host or tenant)")
        return None, ctx.errors
    kind = kind_node.value if is_scalar(kind_node) else None
    if kind not in format_v1.KINDS:
        ctx.error(kind_node, "enum", f"kind must be one of {', '.join(format_v1.KINDS)}")
        return None, ctx.errors
    data = format_v1.KINDS[kind].check(root, ctx, ())
    fp = FilePolicy(path, kind, data, ctx.locs, ctx.at(root))
    if not ctx.errors:
        (_check_host if kind == "host" else _check_tenant)(fp, ctx.errors)
    return (fp if not ctx.errors else None), ctx.errors


def _err(errors, where, rule, message, other=None):
    errors.append(PolicyError(where, rule, message, other))


def _check_host(h, errors):
    d = h.data
    tcs = d["traffic_classes"] or []
    by_tc, by_name = {}, {}
    for i, c in enumerate(tcs):
        if c["tc"] in by_tc:
            _err(errors, h.at("traffic_classes", i, "tc"), "tc-duplicate",
                 f"traffic class {c['tc']} is defined twice", by_tc[c["tc"]])
        by_tc.setdefault(c["tc"], h.at("traffic_classes", i, "tc"))
        if c["name"] in by_name:
            _err(errors, h.at("traffic_classes", i, "name"), "tc-duplicate",
                 f"traffic class name '{c['name']}' is used twice", by_name[c["name"]])
        by_name.setdefault(c["name"], h.at("traffic_classes", i, "name"))
        if c["tsa"] == "ets" and c["bandwidth"] is None:
            _err(errors, h.at("traffic_classes", i), "tsa-bandwidth",
                 f"ETS class {c['tc']} needs a bandwidth share (percent)")
        if c["tsa"] == "strict" and c["bandwidth"] is not None:
            _err(errors, h.at("traffic_classes", i, "bandwidth"), "tsa-bandwidth",
                 f"strict class {c['tc']} takes no bandwidth share")
    ets = [c["bandwidth"] for c in tcs if c["tsa"] == "ets" and c["bandwidth"] is not None]
    if ets and sum(ets) != 100:
        _err(errors, h.at("traffic_classes"), "ets-sum",
             f"ETS bandwidth shares sum to {sum(ets)}%, not 100%")
    if tcs and not ets and len(by_tc) < 8:
        # The classes a file leaves out become ETS classes with 0% (nothing
        # maps to them), and ETS shares must sum to 100: one ETS class is needed.
        _err(errors, h.at("traffic_classes"), "ets-sum",
             "no ETS class: the classes not listed become ETS at 0%, so the shares would sum "
             "to 0%; make one class ETS with bandwidth 100, or list all eight")
    line = d["adapter"]["line_rate"]
    for i, c in enumerate(tcs):
        if c["maxrate"] is not None and c["maxrate"] > line:
            _err(errors, h.at("traffic_classes", i, "maxrate"), "rate-above-line",
                 f"class {c['tc']}'s maxrate {format_rate(c['maxrate'])} is above the line rate "
                 f"{format_rate(line)}", h.at("adapter", "line_rate"))
    if d["adapter"]["enforce_line_rate"]:
        # The devlink param line_rate_kbps holds whole kbit/s in a u32.
        try:
            units.parse_rate(format_rate(line), "kbit")
        except units.UnitError as e:
            _err(errors, h.at("adapter", "line_rate"), e.rule,
                 f"with enforce_line_rate: {e}")
    if d["prio_tc"] is not None:
        for p, tc in enumerate(d["prio_tc"]):
            if tc not in by_tc:
                _err(errors, h.at("prio_tc", p), "prio-tc-undefined",
                     f"priority {p} maps to traffic class {tc}, which traffic_classes does not define")
    seen = {}
    for i, e in enumerate(d["dscp_prio"] or []):
        if e["dscp"] in seen:
            _err(errors, h.at("dscp_prio", i, "dscp"), "dscp-duplicate",
                 f"DSCP {e['dscp']} is mapped twice", seen[e["dscp"]])
        seen.setdefault(e["dscp"], h.at("dscp_prio", i, "dscp"))


def _explicit_vfs(t):
    v = t.data["vfs"]
    if v["range"] is not None:
        a, b = v["range"]
        return [(n, ("vfs", "range")) for n in range(a, b + 1)]
    if v["indices"] is not None:
        return [(n, ("vfs", "indices", i)) for i, n in enumerate(v["indices"])]
    return None


def _check_tenant(t, errors):
    d = t.data
    if d["vlan_priority"] is not None and d["vlan"] is None:
        _err(errors, t.at("vlan_priority"), "vlan-priority-needs-vlan",
             "vlan_priority is the 802.1p priority of the port VLAN: set vlan too")
    if d["vfs"]["indices"] is not None:
        first = {}
        for i, n in enumerate(d["vfs"]["indices"]):
            if n in first:
                _err(errors, t.at("vfs", "indices", i), "vf-index-duplicate",
                     f"VF {n} is listed twice", first[n])
            first.setdefault(n, t.at("vfs", "indices", i))
    own = _explicit_vfs(t)
    own_set = {n for n, _ in own} if own is not None else set()
    overrides = {}
    for i, o in enumerate(d["vf"] or []):
        if own is None:
            _err(errors, t.at("vf", i, "index"), "vf-override-needs-index",
                 "per-VF settings need the tenant's VFs by range or indices, not count")
            continue
        if o["index"] not in own_set:
            _err(errors, t.at("vf", i, "index"), "vf-override-foreign",
                 f"VF {o['index']} is not one of this tenant's VFs", t.at("vfs"))
        if o["index"] in overrides:
            _err(errors, t.at("vf", i, "index"), "vf-override-duplicate",
                 f"VF {o['index']} has settings twice", overrides[o["index"]])
        overrides.setdefault(o["index"], t.at("vf", i, "index"))
    vr = d["vf_rate"] or {}
    for i, o in enumerate(d["vf"] or []):
        mx = o["tx_max"] or vr.get("tx_max")
        sh = o["tx_share"] or vr.get("tx_share")
        if mx and sh and sh > mx:
            _err(errors, t.at("vf", i, "tx_share" if o["tx_share"] else "tx_max"), "share-above-max",
                 f"VF {o['index']}: guarantee {format_rate(sh)} is above its cap {format_rate(mx)}")
    for where_, blk in ((("vf_rate",), vr), (("rate",), d["rate"] or {})):
        if blk.get("tx_max") and blk.get("tx_share") and blk["tx_share"] > blk["tx_max"]:
            _err(errors, t.at(*where_, "tx_share"), "share-above-max",
                 f"guarantee {format_rate(blk['tx_share'])} is above the cap "
                 f"{format_rate(blk['tx_max'])}", t.at(*where_, "tx_max"))
    for i, r in enumerate(d["acl"] or []):
        _check_acl_rule(t, i, r, own_set if own is not None else None, errors)


def _check_acl_rule(t, i, r, own_set, errors):
    at = lambda *k: t.at("acl", i, *k)  # noqa: E731
    act = r["action"]
    if act == "police" and r["police"] is None:
        _err(errors, at("action"), "acl-police-missing", "a police rule needs police: {rate, burst}")
    if act != "police" and r["police"] is not None:
        _err(errors, at("police"), "acl-police-unexpected", f"police: belongs to action police, not {act}")
    if act == "mirror" and r["mirror_to"] is None:
        _err(errors, at("action"), "acl-mirror-missing", "a mirror rule needs mirror_to: VF")
    if act != "mirror" and r["mirror_to"] is not None:
        _err(errors, at("mirror_to"), "acl-mirror-unexpected", f"mirror_to belongs to action mirror, not {act}")
    if r["mirror_to"] is not None and own_set is not None and r["mirror_to"] not in own_set:
        _err(errors, at("mirror_to"), "acl-mirror-foreign",
             f"VF {r['mirror_to']} is not one of this tenant's VFs", t.at("vfs"))
    if r["mirror_to"] is not None and own_set is None:
        _err(errors, at("mirror_to"), "vf-override-needs-index",
             "mirror_to needs the tenant's VFs by range or indices, not count")
    if r["direction"] == "ingress":
        # The PF driver offloads flower on a representor's ingress block
        # only (what the VF sends: pf_tc.c binds ingress blocks); a rule on
        # what a VF receives has no place in the adapter, so it is refused
        # here rather than by the kernel halfway through an apply.
        _err(errors, at("direction"), "acl-direction",
             "the adapter enforces rules on what a VF sends (egress) only; write a rule on "
             "traffic to this tenant as an egress rule of the tenants sending it")
    if r["dst_port"] is not None and r["protocol"] not in ("tcp", "udp"):
        _err(errors, at("dst_port"), "acl-port-needs-l4",
             f"dst_port needs protocol tcp or udp (protocol is {r['protocol']})")
    fams = {n.version for n in (r["src"], r["dst"]) if n is not None}
    want = {"ipv4": 4, "ipv6": 6}.get(r["protocol"])
    if len(fams) > 1 or (want and fams and fams != {want}):
        _err(errors, at("dst" if r["dst"] is not None else "src"), "acl-family",
             "source, destination and protocol mix IPv4 and IPv6")


def load(paths, totalvfs=None, read=None, cache=None):
    """Policy from files; raises PolicyInvalid with every error.
    totalvfs: the PF's sriov_totalvfs when known (live host), else None; or
    a function PF name -> sriov_totalvfs, called once the files are valid
    without it (then checked again with it). cache: a parse_cache.Cache of
    files found valid before (their per-file checks are not run again)."""
    read = read or _read_text
    errors, files = [], []
    for p in misnamed_files(paths):
        base, ext = os.path.splitext(os.path.basename(p))
        errors.append(PolicyError(Where(p, 1, 1), "file-extension",
                                  f"named {ext}, not {ext.lower()}: a directory stands for its files "
                                  "ending in lowercase .yaml or .yml, so this one would be skipped and "
                                  f"apply would remove what it describes; rename it {base}{ext.lower()}"))
    for p in expand_paths(paths):
        try:
            text = read(p)
        except NotRegularFile as e:
            errors.append(PolicyError(Where(p, 1, 1), "file-type", str(e)))
            continue
        except (OSError, UnicodeDecodeError) as e:
            errors.append(PolicyError(Where(p, 1, 1), "file-read", f"cannot read: {e}"))
            continue
        fp = cache.get(p, text) if cache else None
        if fp is None:
            fp, errs = check_file(p, text)
            errors += errs
            if cache and fp is not None and not errs:
                cache.put(p, text, fp)
        if fp is not None:
            files.append(fp)
    if cache:
        cache.save()
    hosts = [f for f in files if f.kind == "host"]
    tenant_files = [f for f in files if f.kind == "tenant"]
    if not hosts and not errors:
        first = expand_paths(paths)[0] if expand_paths(paths) else "<no files>"
        errors.append(PolicyError(Where(first, 1, 1), "host-missing",
                                  "no host file (kind: host) among the files given"))
    for h in hosts[1:]:
        errors.append(PolicyError(h.root, "host-duplicate", "a second host file", hosts[0].root))
    if errors:
        raise PolicyInvalid(errors)
    host = hosts[0]
    tenants = [Tenant(f, f.data["name"]) for f in tenant_files]
    _check_across(host, tenants, None if callable(totalvfs) else totalvfs, errors)
    if errors:
        raise PolicyInvalid(errors)
    if callable(totalvfs):
        # Asked only of files valid without it (a PF that is not there is
        # then a live-state error, not one of the files), and checked on
        # the same parse: parsing is most of a load.
        total = totalvfs(host.data["adapter"]["pf"])
        if total is not None:
            tenants = [Tenant(f, f.data["name"]) for f in tenant_files]
            _check_across(host, tenants, total, errors)
            if errors:
                raise PolicyInvalid(errors)
    return Policy(host, sorted(tenants, key=lambda t: t.name), [f.path for f in files])


def _read_text(path):
    # A named pipe in the directory would block open() until a writer comes
    # (forever), a device could be endless: only a regular file is opened, and
    # opened without waiting (O_NONBLOCK) and checked again once open, in
    # case the path was replaced between the two looks.
    _check_regular(os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        _check_regular(os.fstat(fd).st_mode)
        raw = f.read(1 << 21)
    return raw.decode("utf-8")


def tenant_class(host, tenant):
    """(traffic class number, its definition) the tenant's frames travel in, or None:
    its VLAN priority (0 when untagged) through prio_tc."""
    h = host.data
    if not h["prio_tc"] or not h["traffic_classes"]:
        return None
    prio = tenant.data["vlan_priority"] or 0
    tc = h["prio_tc"][prio]
    return next(((tc, c) for c in h["traffic_classes"] if c["tc"] == tc), None)


def vf_settings(tenant, k, n):
    """Effective settings of a tenant's k-th VF (VF number n)."""
    d = tenant.data
    o = next((o for o in d["vf"] or [] if o["index"] == n), {})
    vr = d["vf_rate"] or {}
    mac = o.get("mac")
    mac_loc = ("vf", (d["vf"] or []).index(o), "mac") if mac is not None else None
    if mac is None and d["mac_base"] is not None:
        mac = d["mac_base"] + k
        mac_loc = ("mac_base",)
    pick = lambda key, default: o[key] if o.get(key) is not None else default  # noqa: E731
    return {
        "mac": mac, "mac_loc": mac_loc,
        "vlan": d["vlan"] or 0, "qos": d["vlan_priority"] or 0,
        "spoofchk": pick("spoofchk", d["spoofchk"]), "trust": pick("trust", d["trust"]),
        "link_state": d["link_state"],
        "tx_max": pick("tx_max", vr.get("tx_max")), "tx_share": pick("tx_share", vr.get("tx_share")),
        "tx_weight": pick("tx_weight", vr.get("tx_weight")),
        "tx_priority": pick("tx_priority", vr.get("tx_priority")),
    }


ESW_RULES_MAX = 65536          # rules in the adapter's switch, all scopes
ESW_METERS_MAX = 4095          # police meters


def acl_filters(rule):
    """Flower filters one rule compiles to (flower_layer.compile_rule): two
    for an L4 protocol without a family or subnet (IPv4 and IPv6), else one."""
    return 2 if rule["protocol"] in ("tcp", "udp", "icmp") and rule["src"] is None \
        and rule["dst"] is None else 1


def _check_across(host, tenants, totalvfs, errors):
    h = host.data
    num_vfs = h["adapter"]["num_vfs"]
    line = h["adapter"]["line_rate"]
    switchdev = h["adapter"]["eswitch_mode"] == "switchdev"
    if totalvfs is not None and num_vfs > totalvfs:
        _err(errors, host.at("adapter", "num_vfs"), "num-vfs-past-totalvfs",
             f"num_vfs {num_vfs} is more than the PF's sriov_totalvfs ({totalvfs})")
    names = {}
    for t in tenants:
        if t.name in names:
            _err(errors, t.file.at("name"), "tenant-duplicate",
                 f"tenant '{t.name}' is described twice", names[t.name])
        names.setdefault(t.name, t.file.at("name"))

    # VFs: explicit ones first, then counts drawn from what is left, lowest
    # first, tenants in name order (so the result depends on the files only).
    owner = {}
    for t in sorted(tenants, key=lambda t: (t.name, t.file.path)):
        own = _explicit_vfs(t.file)
        if own is None:
            continue
        for n, loc in own:
            w = t.file.at(*loc)
            if totalvfs is not None and n >= totalvfs:
                _err(errors, w, "vf-past-totalvfs",
                     f"VF {n} does not exist: the PF has sriov_totalvfs {totalvfs}")
            elif n >= num_vfs:
                _err(errors, w, "vf-past-num-vfs",
                     f"VF {n} is past the host's num_vfs ({num_vfs})", host.at("adapter", "num_vfs"))
            elif n in owner and owner[n][0] is not t:
                _err(errors, w, "vf-overlap",
                     f"VF {n} is also given to tenant '{owner[n][0].name}'", owner[n][1])
            else:
                owner.setdefault(n, (t, w))
                if owner[n][0] is t and n not in t.vfs:
                    t.vfs.append(n)
    free = [n for n in range(num_vfs) if n not in owner]
    for t in sorted(tenants, key=lambda t: (t.name, t.file.path)):
        cnt = t.data["vfs"]["count"]
        if cnt is None:
            continue
        if cnt > len(free):
            _err(errors, t.file.at("vfs", "count"), "vf-pool-exhausted",
                 f"{cnt} VFs asked for, {len(free)} left in the pool of {num_vfs}",
                 host.at("adapter", "num_vfs"))
            continue
        t.vfs, free = free[:cnt], free[cnt:]

    vlans, macs = {}, {}
    acl_totals = {}
    share_total, vf_share_total = 0, 0
    class_sum = {}
    for t in sorted(tenants, key=lambda t: t.name):
        d, f = t.data, t.file
        if d["vlan"] is not None:
            if d["vlan"] in vlans:
                _err(errors, f.at("vlan"), "vlan-shared",
                     f"VLAN {d['vlan']} already belongs to tenant '{vlans[d['vlan']][0]}'", vlans[d["vlan"]][1])
            vlans.setdefault(d["vlan"], (t.name, f.at("vlan")))
        # Rate nodes are not switchdev-only: devlink rate works in legacy mode
        # where the driver has it (vfwarp_pf does); a driver that refuses them
        # makes the apply fail and roll back. ACLs need VF representors.
        if d["acl"] is not None and not switchdev:
            _err(errors, f.at("acl"), "needs-switchdev",
                 "acl compiles to tc flower on representors, which needs eswitch_mode switchdev",
                 host.at("adapter"))
        if d["acl"]:
            # The adapter's rule table (docs/switchdev.md; vfwarp_admin.h ESW_RULE_*):
            # 65536 rules in all, one police meter per police filter, 4095 in all.
            fl = sum(acl_filters(r) for r in d["acl"]) * len(t.vfs)
            po = sum(acl_filters(r) for r in d["acl"] if r["action"] == "police") * len(t.vfs)
            for what, n, limit in (("filters", fl, ESW_RULES_MAX), ("police meters", po, ESW_METERS_MAX)):
                before = acl_totals.get(what, 0)
                acl_totals[what] = before + n
                if acl_totals[what] > limit >= before:
                    _err(errors, f.at("acl"), "acl-capacity",
                         f"with tenant '{t.name}' the ACLs need {acl_totals[what]} {what} (rules x "
                         f"address families x VFs), above the adapter's {limit}")
        vf_shares = 0
        for k, n in enumerate(t.vfs):
            s = vf_settings(t, k, n)
            if s["mac"] is not None:
                w = f.at(*s["mac_loc"])
                if s["mac"] in macs:
                    _err(errors, w, "mac-duplicate",
                         f"VF {n} would get MAC {format_mac(s['mac'])}, already VF {macs[s['mac']][0]}'s",
                         macs[s["mac"]][1])
                elif (s["mac"] >> 40) & 1:
                    _err(errors, w, "mac-multicast",
                         f"mac_base + {k} gives the multicast MAC {format_mac(s['mac'])} for VF {n}")
                macs.setdefault(s["mac"], (n, w))
            if s["tx_max"] and s["tx_max"] > line:
                _err(errors, f.at("vf_rate", "tx_max"), "rate-above-line",
                     f"VF cap {format_rate(s['tx_max'])} is above the line rate {format_rate(line)}",
                     host.at("adapter", "line_rate"))
            vf_shares += s["tx_share"] or 0
        rate = d["rate"] or {}
        if rate.get("tx_max") and rate["tx_max"] > line:
            _err(errors, f.at("rate", "tx_max"), "rate-above-line",
                 f"tenant cap {format_rate(rate['tx_max'])} is above the line rate {format_rate(line)}",
                 host.at("adapter", "line_rate"))
        if rate.get("tx_share") and vf_shares > rate["tx_share"]:
            _err(errors, f.at("vf_rate"), "guarantee-over-tenant-share",
                 f"the VFs' guarantees sum to {format_rate(vf_shares)}, above the tenant's "
                 f"tx_share {format_rate(rate['tx_share'])}", f.at("rate", "tx_share"))
        if rate.get("tx_max") and not rate.get("tx_share") and vf_shares > rate["tx_max"]:
            # A node without a guarantee of its own bounds its children's by its cap.
            _err(errors, f.at("vf_rate"), "guarantee-over-tenant-cap",
                 f"the VFs' guarantees sum to {format_rate(vf_shares)}, above the tenant's "
                 f"tx_max {format_rate(rate['tx_max'])}", f.at("rate", "tx_max"))
        guarantee = rate.get("tx_share") or vf_shares
        share_total += rate.get("tx_share") or 0
        vf_share_total += vf_shares
        for total, what in ((share_total, "tenants' tx_share"), (vf_share_total, "VFs' tx_share")):
            if guarantee and total > line and total - guarantee <= line:
                _err(errors, f.at("rate", "tx_share") if what.startswith("tenants") else f.at("vf_rate"),
                     "guarantee-over-line", f"with tenant '{t.name}' the {what} sum to "
                     f"{format_rate(total)}, above the line rate {format_rate(line)}",
                     host.at("adapter", "line_rate"))
        cls = tenant_class(host, t)
        if cls and guarantee:
            tc, c = cls
            prev = class_sum.get(tc, 0)
            class_sum[tc] = prev + guarantee
            if c["tsa"] == "ets":
                cap = line * c["bandwidth"] // 100
                if class_sum[tc] > cap >= prev:
                    _err(errors, f.at("rate", "tx_share") if rate.get("tx_share") else f.at("vf_rate"),
                         "guarantee-over-class-share",
                         f"guarantees in class {tc} ('{c['name']}') sum to {format_rate(class_sum[tc])} "
                         f"with tenant '{t.name}', above the class's {c['bandwidth']}% = {format_rate(cap)}",
                         host.at("traffic_classes"))
        rd = d["rdma"] or {}
        if rd.get("dscp") is not None and not h["dscp_prio"]:
            # Without a table the DSCP's priority is whatever the adapter's
            # app table holds (vfwarpctl then leaves it alone): nothing the
            # files say decides where the RDMA traffic goes.
            _err(errors, f.at("rdma", "dscp"), "rdma-dscp-unmapped",
                 f"DSCP {rd['dscp']} is not in the host's dscp_prio table: the host file has "
                 "none, so nothing maps the RDMA traffic to a priority", host.root)
        elif rd.get("dscp") is not None:
            if rd["dscp"] not in {e["dscp"] for e in h["dscp_prio"]}:
                _err(errors, f.at("rdma", "dscp"), "rdma-dscp-unmapped",
                     f"DSCP {rd['dscp']} is not in the host's dscp_prio table: the RDMA traffic "
                     "would travel at priority 0", host.at("dscp_prio"))
