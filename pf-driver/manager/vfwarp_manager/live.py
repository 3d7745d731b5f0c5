"""Readers of the live state, from the kernel through the standard tools'
JSON output (iproute2: ip, devlink) and sysfs. Nothing here
remembers what the manager did: plan and drift compare files with these.

Each reader returns plain data in the same shape desired.py produces, so a
diff is a dict comparison. Formats follow iproute2's printers (ip/ipaddress.c
print_vfinfo, devlink/devlink.c pr_out_port_fn_rate); tc and dcb readers
come with the PF driver's tc and DCB support (issues 16, 17). See
tests/data/README.md for the captured samples.
"""
import json
import os

from .runner import ToolError

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


def parse_devlink_rates(doc, dev, vf_ports=None):
    """`devlink -j port function rate show` -> {'nodes': {name: attrs}, 'leaves': {vf: attrs}}
    for devlink instance dev ('pci/0000:01:00.0'); rates in bytes/s, as devlink
    prints them in JSON (print_rate: a number in JSON, units only in text)."""
    if doc is None:
        return {"nodes": {}, "leaves": {}}
    try:
        entries = doc["rate"]
    except (TypeError, KeyError):
        raise LiveError(f"devlink port function rate show: unexpected JSON {str(doc)[:200]}") from None
    nodes, leaves = {}, {}
    for handle, a in entries.items():
        head, _, last = handle.rpartition("/")
        if head != dev or not isinstance(a, dict):
            continue
        attrs = {k: a.get(k) for k in ("tx_share", "tx_max", "tx_priority", "tx_weight", "parent")}
        if a.get("type") == "node":
            nodes[last] = attrs
        elif vf_ports is not None and last in vf_ports:
            leaves[vf_ports[last]] = attrs
    return {"nodes": nodes, "leaves": leaves}

