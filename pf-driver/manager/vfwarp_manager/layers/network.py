"""The libvirt network layer: per tenant a VF pool network `vfwarp-TENANT`
(`forward mode='hostdev' managed='yes'`, the tenant's VFs as PCI
`<address>` entries, its VLAN as `<vlan><tag>`), so that a domain's
`<interface type='network'><source network='vfwarp-TENANT'/>` gets one of
the tenant's VFs, already under its policy.

Through `virsh` (docs/policy.md "libvirt networks" says why not the Python
binding): the readers parse `virsh net-list --name` and `virsh net-dumpxml
--inactive`, and a definition is `virsh net-define /dev/stdin` with the XML
as its input. Actions are virsh argv lists (JSON in the journal); each runs
as one command of the run's virsh co-process (virsh_session.py: one
process, one connection, each command's arguments quoted for virsh's own
parser, never a shell), so a failure is still that command's.

Ownership: a network is vfwarpctl's when its name starts with
NETWORK_PREFIX AND its <metadata> has an element in NETWORK_META_NS (the
tenant's name in its `tenant` attribute). A `vfwarp-*` network without it is
foreign: never read into the state, changed or removed; a tenant whose
network name a foreign network holds is refused before anything changes.

State of an owned network (read back, never remembered):
  {tenant, forward, managed, vfs, pf, vlan, other, active, autostart,
   _xml, _uuid, _users}
vfs are VF numbers of the PF (an <address> that is no VF of it stays as its
PCI address, so it differs); pf the <pf dev> names; vlan the tag ids; other
the elements and attributes this layer does not write (a hand edit: a
<bridge>, a portgroup, a trunk), so that they differ too. `_xml` (libvirt's
inactive XML) makes the exact undo of a redefinition or a removal, `_users`
the running domains whose interfaces use the network (by its name, or by a
VF of its pool); keys with '_' are
carried, not compared (host.mismatches).
"""
import xml.etree.ElementTree as ET

from ..runner import ToolError

# XML text and attribute escaping, written here: xml.sax.saxutils imports
# urllib.request (http.client, email: ~0.3 s of start-up on a TCG lab host)
_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape(text):
    return "".join(_TEXT.get(c, c) for c in text)


def quoteattr(text):
    """As saxutils.quoteattr: single quotes around a value with '"' only."""
    t = escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' not in t:
        return f'"{t}"'
    return f"'{t}'" if "'" not in t else '"' + t.replace('"', "&quot;") + '"'


NETWORK_PREFIX = "vfwarp-"        # the networks vfwarpctl owns: vfwarp-TENANT ...
NETWORK_META_NS = "urn:vfwarp:manager:1"     # ... with metadata in this namespace
URI = "qemu:///system"
META_TAG = f"{{{NETWORK_META_NS}}}tenant"
# What this layer writes; anything else in a definition is "other".
KNOWN = {"network": {"connections"}, "network/name": set(), "network/uuid": set(),
         "network/metadata": set(), "network/forward": {"mode", "managed"},
         "network/forward/address": {"type", "domain", "bus", "slot", "function"},
         "network/forward/pf": {"dev"},
         # a started <pf dev> pool lists its VFs' netdevs or addresses: libvirt's, not ours
         "network/forward/interface": {"dev", "connections"},
         "network/vlan": set(), "network/vlan/tag": {"id"}}


def virsh(uri):
    return ["virsh", "-q", "-c", uri]


def owned(name, root):
    return name.startswith(NETWORK_PREFIX) and tenant_of(root) is not None


def tenant_of(root):
    md = root.find("metadata")
    if md is None:
        return None
    el = md.find(META_TAG)
    return None if el is None else (el.get("tenant") or "")


def pci(addr):
    """'0000:01:00.1' -> (0, 1, 0, 1); <address> attributes likewise."""
    if isinstance(addr, str):
        dom, bus, rest = addr.split(":")
        slot, fn = rest.split(".")
        return (int(dom, 16), int(bus, 16), int(slot, 16), int(fn, 16))
    return tuple(int(addr.get(k, "0"), 0) for k in ("domain", "bus", "slot", "function"))


def pci_text(t):
    return "%04x:%02x:%02x.%x" % t


def parse(xml_text, vf_of_pci):
    """A network's inactive XML -> its state (without active/autostart);
    vf_of_pci: {(domain, bus, slot, function): VF number} of the PF."""
    root = ET.fromstring(xml_text)
    other = []

    def walk(el, path):
        known = KNOWN.get(path)
        if known is None:
            other.append(path)
            return
        other.extend(f"{path}/@{a}" for a in sorted(el.attrib) if a not in known)
        if path == "network/metadata":
            return                       # anyone's metadata is theirs: not compared
        for c in el:
            walk(c, f"{path}/{c.tag}")

    walk(root, "network")
    fwd = root.find("forward")
    vfs = [vf_of_pci.get(pci(a), pci_text(pci(a))) for a in
           (fwd.findall("address") if fwd is not None else [])]
    vlan = root.find("vlan")
    return {"tenant": tenant_of(root),
            "forward": fwd.get("mode", "") if fwd is not None else "",
            "managed": fwd.get("managed", "") if fwd is not None else "",
            "vfs": vfs, "pf": [p.get("dev") for p in (fwd.findall("pf") if fwd is not None else [])],
            "vlan": [int(t.get("id", "0")) for t in (vlan.findall("tag") if vlan is not None else [])],
            "other": sorted(set(other)), "_xml": xml_text,
            "_uuid": (root.findtext("uuid") or "").strip()}


def target(net, tenant):
    """A compiled network (desired.py) as the read-back must show it."""
    return {"tenant": tenant, "forward": net["forward"], "managed": "yes", "vfs": list(net["vfs"]),
            "pf": [], "vlan": [net["vlan"]] if net["vlan"] else [], "other": [],
            "active": True, "autostart": True,
            "_xml": None, "_uuid": None, "_users": None}      # built when applied; not compared


def build_xml(name, want, pci_of_vf, uuid=""):
    """The definition of an owned network; pci_of_vf: {VF: '0000:01:00.1'}.
    Written as text: the metadata element declares its namespace itself
    (libvirt keeps a <metadata> child with its own xmlns; ElementTree would
    move the declaration to the root)."""
    q = quoteattr
    lines = ["<network>", f"  <name>{escape(name)}</name>"]
    if uuid:
        lines.append(f"  <uuid>{escape(uuid)}</uuid>")   # libvirt refuses a new uuid for a name
    lines += ["  <metadata>",
              f"    <vfwarp:tenant xmlns:vfwarp={q(NETWORK_META_NS)} tenant={q(want['tenant'])}/>",
              "  </metadata>",
              f"  <forward mode={q(want['forward'])} managed={q(want['managed'])}>"]
    for vf in want["vfs"]:
        if vf not in pci_of_vf:
            raise NetworkError(f"network {name}: VF {vf} of the PF does not exist")
        d, b, s, f = pci(pci_of_vf[vf])
        lines.append(f"    <address type='pci' domain='0x{d:04x}' bus='0x{b:02x}' slot='0x{s:02x}' "
                     f"function='0x{f:x}'/>")
    lines.append("  </forward>")
    if want["vlan"]:
        lines += ["  <vlan>"] + [f"    <tag id='{int(t)}'/>" for t in want["vlan"]] + ["  </vlan>"]
    return "\n".join(lines + ["</network>", ""])


class NetworkError(RuntimeError):
    """An owned network cannot be written as asked (a VF that is not there)."""


class Refused(RuntimeError):
    """A change this layer will not make: a network name held by a foreign
    network, or a change to a network a running domain uses (without
    --allow-disruptive). Raised while planning: nothing has changed."""


# ---- reading ----------------------------------------------------------------

def _live_error(msg):
    from .live import LiveError
    return LiveError(msg)


def virsh_result(runner, argv, stdin=None):
    """Run a virsh argv (virsh(uri) + command) as a command of the run's virsh
    co-process (virsh_session.py): one process and one connection for all of
    a run's libvirt commands, each command's result on its own."""
    if list(argv[:3]) != ["virsh", "-q", "-c"] or len(argv) < 5:
        raise ValueError(f"not a virsh command of this layer: {argv!r}")
    return runner.virsh(argv[3], list(argv[4:]), stdin)


def check(runner, argv, stdin=None):
    """stdout of a virsh command; ToolError when virsh reported an error."""
    r = virsh_result(runner, argv, stdin)
    if r.returncode != 0:
        raise ToolError(r)
    return r.stdout


def _read(runner, uri, *args):
    try:
        return check(runner, virsh(uri) + list(args))
    except ToolError as e:
        raise _live_error(str(e)) from None


def lists(runner, uri, expect=()):
    """{'all': [...], 'active': [...], 'autostart': [...], 'domains': [...],
    'dumps': {...}}: network names, the running domains' names, and the
    definitions of the networks `expect` names that exist ({name: inactive
    XML}): the files name the networks they want, so the probe that chooses
    the layers reads them too and the snapshot moments later asks nothing
    again (re-apply, plan, drift)."""
    out = {k: [n.strip() for n in _read(runner, uri, *a).splitlines() if n.strip()]
           for k, a in (("all", ["net-list", "--all", "--name"]), ("active", ["net-list", "--name"]),
                        ("autostart", ["net-list", "--all", "--name", "--autostart"]),
                        ("domains", ["list", "--name"]))}
    names = set(out["all"])
    out["dumps"] = dumps(runner, uri, [n for n in dict.fromkeys(expect) if n in names])
    return out


def dumps(runner, uri, names):
    """{name: inactive XML} of these networks. Only the inactive XML: who uses
    a network comes from the running domains (read once, and only when a
    domain runs), not from each running network's live XML and its
    `connections` (a second read per network: 32 of a re-apply's 67 virsh
    commands at 32 tenants, ~80 ms each on a TCG lab host)."""
    out = {}
    for n in names:
        inactive = _read(runner, uri, "net-dumpxml", "--inactive", "--", n)
        if not inactive.strip():
            raise _live_error(f"virsh net-dumpxml --inactive {n}: nothing printed (the network "
                              "went away while it was read?)")
        out[n] = inactive
    return out


def running_domains(runner, uri, names):
    """[(name, [interface and hostdev elements])] of these running domains
    (`virsh list --name`)."""
    out = []
    try:
        for d in names:
            root = ET.fromstring(_read(runner, uri, "dumpxml", "--", d))
            out.append((d, root.findall("devices/interface") + root.findall("devices/hostdev")))
    except ET.ParseError as e:
        raise _live_error(f"virsh dumpxml: unexpected XML: {e}") from None
    return out


def users(domains, name, addresses):
    """Of running_domains(), those using network `name`: an interface whose
    source is the network, or (how libvirt shows a running domain's
    interface from a hostdev pool) a hostdev interface or <hostdev> on one
    of the pool's PCI addresses (tuples, pci())."""
    try:
        return [d for d, devs in domains
                if any(s.get("network") == name for e in devs for s in e.findall("source"))
                or any(pci(a) in addresses for e in devs for a in e.findall("source/address")
                       if a.get("type", "pci") == "pci")]
    except ValueError as e:
        raise _live_error(f"virsh dumpxml: unexpected XML: {e}") from None


def read(runner, uri, vf_of_pci, listed=None):
    """({name: state} of the owned networks, [foreign vfwarp-* names]).
    listed: lists() as just read (the model's probe)."""
    listed = listed if listed is not None else lists(runner, uri)
    mine = [n for n in listed["all"] if n.startswith(NETWORK_PREFIX)]
    if not mine:
        return {}, []
    active, auto = set(listed["active"]), set(listed["autostart"])
    nets, foreign, domains = {}, [], None
    got = {n: d for n, d in listed.get("dumps", {}).items() if n in mine}
    rest = [n for n in mine if n not in got]         # not named by the files (a deleted tenant's)
    got.update(dumps(runner, uri, rest) if rest else {})
    for n in mine:
        try:
            root = ET.fromstring(got[n])
        except ET.ParseError as e:
            raise _live_error(f"virsh net-dumpxml {n}: not XML: {e}") from None
        if not owned(n, root):
            foreign.append(n)
            continue
        st = parse(got[n], vf_of_pci)
        st.update(active=n in active, autostart=n in auto, _users=[])
        if n in active and listed["domains"]:
            # a domain uses the network by its name or (a hostdev pool, as libvirt
            # shows a running domain's interface) by one of the pool's VFs
            if domains is None:
                domains = running_domains(runner, uri, listed["domains"])   # once, for every network
            st["_users"] = users(domains, n, {pci(a) for a in root.findall("forward/address")})
        nets[n] = st
    return nets, sorted(foreign)


def read_pf(runner, uri, pf, listed=None):
    """read() of the owned networks whose pools are this PF's VFs."""
    from . import live
    vf_of_pci = {pci(addr): vf for vf, addr in live.read_vf_pci(runner, pf).items()}
    return read(runner, uri, vf_of_pci, listed)


def targets(desired):
    """The networks of a desired state (desired.py), each with its tenant."""
    return {n: target(net, net["owner"].partition("/")[2]) for n, net in desired["networks"].items()}


# ---- steps --------------------------------------------------------------------

def define_action(uri, xml):
    """Define exactly this XML (an undo: the old definition as read)."""
    return {"argv": virsh(uri) + ["net-define", "/dev/stdin"], "stdin": xml}


def build_action(uri, pf, name, want, uuid):
    """Define the network from its target when the action runs: the VFs' PCI
    addresses are read then (the VFs may be created by an earlier step)."""
    return {"net_define": {"uri": uri, "pf": pf, "name": name, "want": want, "uuid": uuid}}


def run_build(runner, action):
    from . import live
    a = action["net_define"]
    pcis = live.read_vf_pci(runner, a["pf"])
    xml = build_xml(a["name"], a["want"], {int(k): v for k, v in pcis.items()}, a["uuid"])
    run_stdin(runner, define_action(a["uri"], xml))


def run_stdin(runner, action):
    check(runner, action["argv"], action["stdin"])


def _cmd(uri, cmd, name, *flags):
    """A command on one network: its name after `--`, so that no name is
    read as an option by virsh's parser."""
    return {"argv": virsh(uri) + [cmd, *flags, "--", name]}


def _fmt(v):
    if isinstance(v, list):
        return ",".join(map(str, v)) or "(none)"
    return str(v).lower() if isinstance(v, bool) else (str(v) or "(none)")


def compared(state):
    return {k: v for k, v in state.items() if not k.startswith("_")}


def steps(uri, pf, before, target_nets, foreign, refuse_in_use, Step, uuids=None):
    """Steps from the owned networks `before` to `target_nets`. A name a
    foreign network holds is refused (Refused); so is a change to a network
    a running domain uses when refuse_in_use (apply without
    --allow-disruptive; restoring a snapshot, which must not stop, never
    refuses). uuids: {name: uuid} for a network to define again (removed
    by an earlier step) with the uuid it had."""
    out, uuids = [], uuids or {}
    clash = sorted(set(target_nets) & set(foreign))
    if clash:
        raise Refused("; ".join(
            f"libvirt network {n} exists and is not vfwarpctl's (its metadata has no "
            f"{NETWORK_META_NS} element): refusing to touch it; rename or remove it, or rename "
            f"the tenant" for n in clash))
    for n in sorted(target_nets):
        want, have = target_nets[n], before.get(n)      # a foreign name was refused above
        if have is None:
            do = [build_action(uri, pf, n, want, uuids.get(n, "")) if want.get("_xml") is None
                  else define_action(uri, want["_xml"])]
            if want["autostart"]:
                do.append(_cmd(uri, "net-autostart", n))
            if want["active"]:
                do.append(_cmd(uri, "net-start", n))
            undo = ([_cmd(uri, "net-destroy", n)] if want["active"] else []) + \
                [_cmd(uri, "net-undefine", n)]
            out.append(Step("networks", n, "define" + (", start" if want["active"] else ""),
                            do, undo))
            continue
        diff = [k for k in compared(want) if k not in ("active", "autostart")
                and want[k] != have.get(k)]
        if diff:
            change = ", ".join(f"{k}: {_fmt(have.get(k))} -> {_fmt(want[k])}" for k in diff)
            if have["_users"] and refuse_in_use:
                raise Refused(f"libvirt network {n} differs from the files ({change}"
                              f") and is in use by the running domain(s) {', '.join(have['_users'])}:"
                              " restarting it would take their VFs' network from under them; shut "
                              "them down or detach their interfaces first, or pass --allow-disruptive")
            do = [build_action(uri, pf, n, want, have["_uuid"]) if want.get("_xml") is None
                  else define_action(uri, want["_xml"])]
            undo = [define_action(uri, have["_xml"])]
            # A started network runs its old definition until restarted.
            if have["active"]:
                do += [_cmd(uri, "net-destroy", n)]
                undo = [_cmd(uri, "net-destroy", n)] + undo
                if want["active"]:
                    do += [_cmd(uri, "net-start", n)]
                undo += [_cmd(uri, "net-start", n)]
            elif want["active"]:
                do += [_cmd(uri, "net-start", n)]
                undo = [_cmd(uri, "net-destroy", n)] + undo
            out.append(Step("networks", n, change
                            + (", restart" if have["active"] and want["active"] else ""), do, undo))
            have = dict(have, active=want["active"])
        if want["autostart"] != have["autostart"]:
            flag = [] if want["autostart"] else ["--disable"]
            back = ["--disable"] if want["autostart"] else []
            out.append(Step("networks", n, f"autostart: {_fmt(have['autostart'])} -> "
                            f"{_fmt(want['autostart'])}", [_cmd(uri, "net-autostart", n, *flag)],
                            [_cmd(uri, "net-autostart", n, *back)]))
        if want["active"] != have["active"]:
            on = want["active"]
            out.append(Step("networks", n, f"active: {_fmt(have['active'])} -> {_fmt(on)}",
                            [_cmd(uri, "net-start" if on else "net-destroy", n)],
                            [_cmd(uri, "net-destroy" if on else "net-start", n)]))
    for n in sorted(set(before) - set(target_nets)):
        have = before[n]
        if have["_users"] and refuse_in_use:
            raise Refused(f"libvirt network {n} is no longer asked for by any file but is in use "
                          f"by the running domain(s) {', '.join(have['_users'])}: shut them down or "
                          "detach their interfaces first, or pass --allow-disruptive")
        do = ([_cmd(uri, "net-destroy", n)] if have["active"] else []) + [_cmd(uri, "net-undefine", n)]
        undo = [define_action(uri, have["_xml"])]
        if have["autostart"]:
            undo.append(_cmd(uri, "net-autostart", n))
        if have["active"]:
            undo.append(_cmd(uri, "net-start", n))
        out.append(Step("networks", n, "remove (no file asks for it)", do, undo))
    return out
