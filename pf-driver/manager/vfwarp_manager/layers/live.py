"""Readers of the live state, from the kernel through the standard tools'
JSON output (iproute2: ip, devlink, tc, dcb) and sysfs. Nothing here
remembers what the manager did: plan and drift compare files with these.

Each reader returns plain data in the same shape desired.py produces, so a
diff is a dict comparison. Formats follow iproute2's printers (ip/ipaddress.c
print_vfinfo, devlink/devlink.c pr_out_port_fn_rate, dcb/dcb_*.c); the tc
flower reader is flower_layer.read_dev. See
tests/data/README.md for the captured samples.
"""
import json
import os
import re

from ..runner import ToolError

SYSFS_NET = "/sys/class/net"
LINK_STATES = {"auto", "enable", "disable"}


class LiveError(RuntimeError):
    """The live state could not be read (tool missing or failed, bad JSON)."""


def _json(runner, argv):
    try:
        out = runner.check(argv)
    except ToolError as e:
        raise LiveError(str(e)) from None
    except FileNotFoundError:
        raise LiveError(f"{argv[0]}: not installed") from None
    try:
        return json.loads(out) if out.strip() else None
    except ValueError as e:
        raise LiveError(f"{' '.join(argv)}: output is not JSON: {e}") from None


def read_sriov(runner, pf):
    """{'numvfs': n, 'totalvfs': n, 'pci': '0000:..', 'vf_pci': {i: '0000:..'}}
    from /sys/class/net/PF/device (sriov_numvfs, sriov_totalvfs, virtfnN)."""
    dev = os.path.join(SYSFS_NET, pf, "device")
    try:
        num = int(runner.read_file(os.path.join(dev, "sriov_numvfs")).strip())
        total = int(runner.read_file(os.path.join(dev, "sriov_totalvfs")).strip())
    except FileNotFoundError:
        raise LiveError(f"{pf}: no SR-IOV PF at {dev} (sriov_numvfs missing)") from None
    except ValueError as e:
        raise LiveError(f"{pf}: unreadable sriov_numvfs/totalvfs: {e}") from None
    return {"numvfs": num, "totalvfs": total}


def read_vf_pci(runner, pf):
    """{VF number: PCI address} from the PF's virtfnN links (libvirt names a
    pool's VFs by PCI address)."""
    dev = os.path.join(SYSFS_NET, pf, "device")
    out = {}
    for n in range(read_sriov(runner, pf)["numvfs"]):
        try:
            out[n] = runner.link_target_name(os.path.join(dev, f"virtfn{n}"))
        except FileNotFoundError:
            raise LiveError(f"{pf}: VF {n} has no {dev}/virtfn{n} link") from None
    return out


def parse_ip_link_vfs(doc, pf):
    """{vf index: settings} from `ip -j -d link show dev PF` (print_vfinfo).

    iproute2 leaves out what equals its default: vlan/qos 0 (an empty object
    in vlan_list), max_tx/min_tx 0 are printed, spoofchk/trust only when the
    driver reports them. Rates are in Mbit/s, as `ip link set` takes them."""
    if not isinstance(doc, list) or len(doc) != 1 or not isinstance(doc[0], dict):
        raise LiveError(f"ip link show {pf}: expected one link, got {type(doc).__name__}")
    link = doc[0]
    if link.get("ifname") != pf:
        raise LiveError(f"ip link show {pf}: answered for {link.get('ifname')!r}")
    vfs = {}
    for e in link.get("vfinfo_list", []):
        if not isinstance(e, dict) or not isinstance(e.get("vf"), int):
            raise LiveError(f"ip link show {pf}: malformed vfinfo entry {e!r}")
        vl = (e.get("vlan_list") or [{}])[0] if "vlan_list" in e else e
        rate = e.get("rate") or {}
        vfs[e["vf"]] = {
            "mac": e.get("address", "00:00:00:00:00:00").lower(),
            "vlan": int(vl.get("vlan", 0)),
            "qos": int(vl.get("qos", 0)),
            "spoofchk": e.get("spoofchk"),
            "trust": e.get("trust"),
            "link_state": e.get("link_state") if e.get("link_state") in LINK_STATES else None,
            "max_tx_rate": int(rate.get("max_tx", e.get("tx_rate", 0))),
            "min_tx_rate": int(rate.get("min_tx", 0)),
        }
    return vfs


def read_ip_link_vfs(runner, pf):
    return parse_ip_link_vfs(_json(runner, ["ip", "-j", "-d", "link", "show", "dev", pf]), pf)


def parse_devlink_eswitch(doc):
    """`devlink -j dev eswitch show DEV` -> 'legacy' | 'switchdev'."""
    try:
        (attrs,) = doc["dev"].values()
        return attrs["mode"]
    except (TypeError, KeyError, ValueError, AttributeError):
        raise LiveError(f"devlink dev eswitch show: unexpected JSON {str(doc)[:200]}") from None


def parse_devlink_vf_ports(doc, dev):
    """`devlink -j port show` -> {port index (str): VF number} for dev's pcivf
    ports: a rate leaf is named by its port index, which drivers number
    their own way (mlx5: vport), so the VF number comes from the port's vfnum."""
    out = {}
    for handle, a in ((doc or {}).get("port") or {}).items():
        head, _, idx = handle.rpartition("/")
        if head == dev and isinstance(a, dict) and a.get("flavour") == "pcivf" \
                and isinstance(a.get("vfnum"), int):
            out[idx] = a["vfnum"]
    return out


def parse_devlink_vf_reprs(doc, dev):
    """`devlink -j port show DEV` -> {VF number: representor netdev}: in
    switchdev mode a VF's devlink port names its representor (`netdev`)."""
    out = {}
    for handle, a in ((doc or {}).get("port") or {}).items():
        if handle.rpartition("/")[0] == dev and isinstance(a, dict) and a.get("flavour") == "pcivf" \
                and isinstance(a.get("vfnum"), int) and a.get("netdev"):
            out[a["vfnum"]] = a["netdev"]
    return out


def read_vf_reprs(runner, dev):
    return parse_devlink_vf_reprs(_json(runner, ["devlink", "-j", "port", "show", dev]), dev)


def read_eswitch(runner, dev):
    return parse_devlink_eswitch(_json(runner, ["devlink", "-j", "dev", "eswitch", "show", dev]))


def devlink_dev(runner, pf):
    """'pci/0000:01:00.0': the devlink instance of the PF's PCI function."""
    try:
        return "pci/" + runner.link_target_name(f"{SYSFS_NET}/{pf}/device")
    except FileNotFoundError:
        raise LiveError(f"{pf}: no PCI device behind it (no devlink instance)") from None


def read_vf_ports(runner, dev):
    return parse_devlink_vf_ports(_json(runner, ["devlink", "-j", "port", "show", dev]), dev)


def _rate_attrs(a):
    # devlink leaves zero rates, weights and priorities out, and `parent`
    # when at the root: the defaults are spelled out here so that a
    # comparison never depends on what a printer omits.
    return {"tx_share": int(a.get("tx_share") or 0), "tx_max": int(a.get("tx_max") or 0),
            "tx_priority": int(a.get("tx_priority") or 0),
            "tx_weight": int(a.get("tx_weight") or 0), "parent": a.get("parent") or ""}


def parse_rate_tree(doc, dev, vf_ports):
    """`devlink -j port function rate show` -> {'nodes': {name: attrs}, 'leaves': {vf: attrs}}
    for dev's nodes and its VFs' leaves (vf_ports: {port index: VF number});
    rates in bytes/s, every attribute present (0 / '' for the defaults)."""
    if doc is None:
        return {"nodes": {}, "leaves": {}}
    entries = doc.get("rate") if isinstance(doc, dict) else None
    if not isinstance(entries, dict):
        raise LiveError(f"devlink port function rate show: unexpected JSON {str(doc)[:200]}")
    nodes, leaves = {}, {}
    for handle, a in entries.items():
        head, _, last = handle.rpartition("/")
        if head != dev or not isinstance(a, dict):
            continue
        if a.get("type") == "node":
            nodes[last] = _rate_attrs(a)
        elif last in vf_ports:
            leaves[vf_ports[last]] = _rate_attrs(a)
    return {"nodes": nodes, "leaves": leaves}


RATE_SHOW = ["devlink", "-j", "port", "function", "rate", "show"]


def read_rate_tree(runner, dev, doc=None):
    """doc: `devlink -j port function rate show` as just read (has_rate_tree)."""
    ports = read_vf_ports(runner, dev)
    if doc is None:
        doc = _json(runner, RATE_SHOW)
    return parse_rate_tree(doc, dev, ports)


def has_rate_tree(runner, pf):
    """(whether the PF has a devlink instance with rate objects (at least the
    PF's own leaf), the rate show document read to know it): a devlink
    instance without devlink rate has nothing the rate layer could read back
    or set."""
    try:
        dev = devlink_dev(runner, pf)
        doc = _json(runner, RATE_SHOW)
    except LiveError:
        return False, None
    entries = doc.get("rate") if isinstance(doc, dict) else None
    return isinstance(entries, dict) and any(h.startswith(dev + "/") for h in entries), doc


LINE_PARAM = "line_rate_kbps"


def parse_line_rate(doc, dev):
    """`devlink -j dev param show DEV name line_rate_kbps` -> the runtime value (kbit/s)."""
    try:
        (p,) = doc["param"][dev]
        (v,) = [v for v in p["values"] if v.get("cmode") == "runtime"]
        return int(v["value"])
    except (TypeError, KeyError, ValueError):
        raise LiveError(f"devlink param {LINE_PARAM}: unexpected JSON {str(doc)[:200]}") from None


def read_line_rate(runner, dev):
    return parse_line_rate(_json(runner, ["devlink", "-j", "dev", "param", "show", dev,
                                          "name", LINE_PARAM]), dev)


# ---- dcb (iproute2's dcb: dcb_ets.c, dcb_maxrate.c, dcb_app.c, dcb_apptrust.c) ----

# iproute2 releases whose `dcb maxrate` was seen passing its number to the
# kernel unconverted: `tc-maxrate T:Nbps` sets N kbit/s (dcbnl's unit) and
# `dcb -j maxrate show` prints the kernel's kbit/s as they are
# (tests/lab/test_dcb.py, docs/qos.md). Upstream later converts; with a dcb
# not listed here vfwarpctl refuses to read or write maxrate rather than
# guess which of the two it is.
DCB_MAXRATE_VERBATIM = ("6.15.0",)


def dcb_version(runner):
    """'6.15.0' from `dcb -V` ('dcb utility, iproute2-6.15.0')."""
    try:
        out = runner.check(["dcb", "-V"])
    except ToolError as e:
        raise LiveError(str(e)) from None
    except FileNotFoundError:
        raise LiveError("dcb: not installed") from None
    m = re.search(r"iproute2-(?:ss)?v?([0-9][0-9.]*[0-9])", out)
    if not m:
        raise LiveError(f"dcb -V: no iproute2 version in {out.strip()[:100]!r}")
    return m.group(1)


def check_dcb_maxrate_units(runner):
    v = dcb_version(runner)
    if v not in DCB_MAXRATE_VERBATIM:
        raise LiveError(f"dcb maxrate: this dcb is iproute2 {v}, whose maxrate units vfwarpctl "
                        f"does not know (iproute2 {', '.join(DCB_MAXRATE_VERBATIM)} sends bytes/s "
                        "unconverted where dcbnl wants kbit/s; later releases convert); leave "
                        "maxrate and traffic_classes out of the host file, or check this dcb "
                        "and add it to live.DCB_MAXRATE_VERBATIM")


def _dcb_json(runner, what, pf):
    doc = _json(runner, ["dcb", "-j", what, "show", "dev", pf])
    if not isinstance(doc, dict):
        raise LiveError(f"dcb {what} show dev {pf}: unexpected JSON {str(doc)[:200]}")
    return doc


def parse_dcb_ets(doc):
    try:
        return {"tc_tsa": [str(x) for x in doc["tc_tsa"]], "tc_bw": [int(x) for x in doc["tc_bw"]],
                "prio_tc": [int(x) for x in doc["prio_tc"]]}
    except (KeyError, TypeError, ValueError):
        raise LiveError(f"dcb ets show: unexpected JSON {str(doc)[:200]}") from None


def parse_dcb_maxrate(doc):
    try:
        return [int(x) for x in doc["tc_maxrate"]]
    except (KeyError, TypeError, ValueError):
        raise LiveError(f"dcb maxrate show: unexpected JSON {str(doc)[:200]}") from None


def parse_dcb_app_dscp(doc):
    """{dscp: priority} of the app table's DSCP entries; a DSCP with several
    priorities (dcbnl allows it, the device does not) maps to their sorted list."""
    out = {}
    for e in doc.get("dscp_prio") or []:
        if not isinstance(e, list) or len(e) < 2:
            raise LiveError(f"dcb app show: unexpected dscp_prio entry {e!r}")
        out.setdefault(int(e[0]), []).append(int(e[1]))
    return {d: ps[0] if len(ps) == 1 else sorted(ps) for d, ps in out.items()}


def parse_dcb_apptrust(doc):
    return [str(x) for x in doc.get("order") or []]


def read_dcb(runner, pf, parts):
    """The DCB state of the PF netdev for the parts asked ('ets', 'maxrate',
    'app', 'apptrust'), read from the driver by `dcb -j ... show`."""
    out = {}
    if "ets" in parts:
        out.update(parse_dcb_ets(_dcb_json(runner, "ets", pf)))
    if "maxrate" in parts:
        check_dcb_maxrate_units(runner)
        out["maxrate"] = parse_dcb_maxrate(_dcb_json(runner, "maxrate", pf))
    if "app" in parts:
        out["dscp_prio"] = parse_dcb_app_dscp(_dcb_json(runner, "app", pf))
    if "apptrust" in parts:
        out["apptrust"] = parse_dcb_apptrust(_dcb_json(runner, "apptrust", pf))
    return out
