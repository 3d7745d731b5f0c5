"""The libvirt network layer (layers/network.py): readers on net-dumpxml XML
captured from a lab host (tests/data/net-*.xml), and compile -> steps ->
read back, undo, ownership and drift against tests/virshhost.py, a stand-in
for libvirt's network driver behind virsh (this machine has no libvirt; the
lab test runs the real one)."""
import json
from pathlib import Path

import pytest

from vfwarp_manager.layers import desired, host as layers, live, network as network_layer
from vfwarp_manager.txn import plan, statedir, transaction
from vfwarp_manager.layers.actions import Step
from vfwarp_manager.runner import Result

from netfiles import BLUE, HOST, PF, RED, compiled
from virshhost import VirshError, VirshHost, vf_pci

DATA = Path(__file__).resolve().parents[1] / "data"
URI = network_layer.URI
# captured on a lab host (tests/data/README.md)
OWNED_XML = (DATA / "net-owned-red.xml").read_text()
FOREIGN_XML = (DATA / "net-foreign-pool.xml").read_text()


class NetOnly(layers.PfHost):
    """PfHost reduced to its networks layer (the other layers' tools are not
    in the stand-in); read_networks, target and the steps are PfHost's."""

    def read(self, runner):
        return {"networks": self.read_networks(runner)}

    def target(self, want):
        return {"networks": super().target(want)["networks"]}

    def steps(self, before, target):
        return network_layer.steps(self.networks, self.pf, before["networks"], target["networks"],
                                   self._foreign, self.refuse_in_use, Step)


def model(host, want, refuse_in_use=True):
    m = NetOnly.for_desired(host, want)
    assert m.networks == URI
    m.refuse_in_use = refuse_in_use
    return m


def apply(tmp_path, host, want, inject=None, refuse_in_use=True):
    m = model(host, want, refuse_in_use)
    sd = statedir.StateDir(str(tmp_path / "state"))
    sd.ensure()
    return m, transaction.run(sd, m, host, m.target(want), "apply", None, inject)


def test_captured_owned_network_parses_to_its_tenant_vfs_and_vlan():
    st = network_layer.parse(OWNED_XML, {network_layer.pci(vf_pci(n)): n for n in range(8)})
    assert {k: v for k, v in st.items() if not k.startswith("_")} == {
        "tenant": "red", "forward": "hostdev", "managed": "yes", "vfs": [1, 3], "pf": [],
        "vlan": [300], "other": []}
    # an address that is no VF of the PF stays as its PCI address (it differs)
    st = network_layer.parse(OWNED_XML, {network_layer.pci(vf_pci(1)): 1})
    assert st["vfs"] == [1, "0000:01:00.4"]


def test_hand_added_elements_are_other_and_foreign_networks_are_not_owned():
    edited = OWNED_XML.replace("</forward>", "</forward>\n  <portgroup name='x'/>") \
                      .replace("<vlan>", "<vlan trunk='yes'>")
    st = network_layer.parse(edited, {})
    assert st["other"] == ["network/portgroup", "network/vlan/@trunk"]
    import xml.etree.ElementTree as ET
    root = ET.fromstring(FOREIGN_XML)
    assert root.findtext("name").startswith(desired.NETWORK_PREFIX)
    assert not network_layer.owned(root.findtext("name"), root)
    assert network_layer.owned("vfwarp-red", ET.fromstring(OWNED_XML))
    assert not network_layer.owned("red", ET.fromstring(OWNED_XML))     # prefix AND metadata


def test_applied_networks_read_back_equal_and_reapply_changes_nothing(tmp_path):
    host = VirshHost(PF, numvfs=4)
    host.add(FOREIGN_XML)
    host.add("<network><name>default</name><forward mode='nat'/></network>", autostart=False)
    foreign = {n: host.state()[n] for n in ("vfwarp-pool-red", "default")}
    want = compiled(tmp_path, **{"red.yaml": RED, "blue.yaml": BLUE})
    m, out = apply(tmp_path, host, want)
    assert out.result == "applied", out.reason
    assert [str(s) for s in out.steps] == ["networks vfwarp-blue: define, start",
                                           "networks vfwarp-red: define, start"]
    live = m.read(host)
    assert layers.mismatches(live, m.target(want)) == []
    assert live["networks"]["vfwarp-blue"]["vfs"] == [3, 2]          # the file's order
    import xml.etree.ElementTree as ET
    red = ET.fromstring(live["networks"]["vfwarp-red"]["_xml"])
    assert [a.get("function") for a in red.findall("forward/address")] == ["0x1", "0x2"]
    assert red.find("vlan/tag").get("id") == "300" and red.find("forward").get("managed") == "yes"
    assert {n: host.state()[n] for n in foreign} == foreign
    assert m._foreign == ["vfwarp-pool-red"]
    _, again = apply(tmp_path, host, want)
    assert (again.result, again.steps) == ("unchanged", [])
    assert [c for c in plan.diff(plan.read_live(host, want), want) if c.layer == "network"] == []


def test_each_failure_after_a_step_is_undone_to_the_snapshot(tmp_path):
    """From red + blue to: red's VLAN and VFs changed, blue deleted, green
    new; a failure after each step leaves libvirt exactly as before."""
    host = VirshHost(PF, numvfs=4)
    host.add(FOREIGN_XML)
    a = compiled(tmp_path, **{"red.yaml": RED, "blue.yaml": BLUE})
    assert apply(tmp_path, host, a)[1].result == "applied"
    host.nets["vfwarp-blue"].autostart = False            # differs too: its own step
    before = host.state()
    b = compiled(tmp_path, **{"red.yaml": RED.replace("300", "301").replace("0-1", "0-2"),
                              "green.yaml": "version: 1\nkind: tenant\nname: green\nvfs: {indices: [3]}\n"})
    _, out = apply(tmp_path, host, b, transaction.Injection("verify"))
    assert out.result == "restored" and host.state() == before
    summaries = [str(s) for s in out.steps]
    assert summaries == ["networks vfwarp-green: define, start",
                         "networks vfwarp-red: vfs: 0,1 -> 0,1,2, vlan: 300 -> 301, restart",
                         "networks vfwarp-blue: remove (no file asks for it)"], summaries
    for k in range(1, len(out.steps) + 1):
        _, out = apply(tmp_path, host, b, transaction.Injection(f"{k}:after"))
        assert (out.result, out.problems) == ("restored", []), (k, out.problems)
        assert host.state() == before, k
    m, out = apply(tmp_path, host, b)
    assert out.result == "applied"
    assert sorted(host.nets) == ["vfwarp-green", "vfwarp-pool-red", "vfwarp-red"]
    assert host.nets["vfwarp-red"].uuid == before["vfwarp-red"][3]      # redefined in place
    assert layers.mismatches(m.read(host), m.target(b)) == []


def test_a_vf_count_change_takes_the_networks_down_first_and_every_undo_restores(tmp_path):
    """libvirt refuses a pool whose addresses are not VFs: with the VF count
    going 4 -> 0 -> 2, the owned networks are removed before it (their undo
    comes after the old VFs are back) and defined again after (same uuid)."""
    host = VirshHost(PF, numvfs=4)
    red = "version: 1\nkind: tenant\nname: red\nvfs: {indices: [2, 3]}\n"
    a = compiled(tmp_path, **{"red.yaml": red})
    sd = statedir.StateDir(str(tmp_path / "state"))
    sd.ensure()

    def run(want, inject=None):
        m = layers.PfHost.for_desired(host, want)
        assert m.networks == URI and not m.rate and not m.eswitch
        m.refuse_in_use = True
        return m, transaction.run(sd, m, host, m.target(want), "apply", None, inject)

    assert run(a)[1].result == "applied"
    before = host.state()
    b = compiled(tmp_path, host=HOST.replace("num_vfs: 4", "num_vfs: 2"),
                 **{"red.yaml": red.replace("[2, 3]", "[0, 1]")})
    _, out = run(b, transaction.Injection("verify"))
    assert [str(s) for s in out.steps] == [
        "networks vfwarp-red: remove (no file asks for it)", f"sriov {PF}: sriov_numvfs: 4 -> 0",
        f"sriov {PF}: sriov_numvfs: 0 -> 2", "networks vfwarp-red: define, start"]
    for k in range(1, len(out.steps) + 1):
        _, out = run(b, transaction.Injection(f"{k}:after"))
        assert (out.result, out.problems) == ("restored", []), (k, out.problems)
        assert host.state() == before and host.files[f"/sys/class/net/{PF}/device/sriov_numvfs"] \
            == "4\n", k
    m, out = run(b)
    assert out.result == "applied"
    assert host.nets["vfwarp-red"].uuid == before["vfwarp-red"][3]
    assert layers.mismatches(m.read(host), m.target(b)) == []


def test_a_tenant_named_like_a_foreign_network_is_refused_untouched(tmp_path):
    host = VirshHost(PF, numvfs=4)
    host.add(FOREIGN_XML)                              # vfwarp-pool-red, no vfwarpctl metadata
    before = host.state()
    want = compiled(tmp_path, **{"pool-red.yaml": RED.replace("name: red", "name: pool-red")})
    with pytest.raises(network_layer.Refused, match="vfwarp-pool-red exists and is not vfwarpctl's"):
        apply(tmp_path, host, want)
    assert host.state() == before
    assert {c[0] for c in host.virsh_cmds} == {"net-list", "list", "net-dumpxml"}   # reads only
    state = plan.read_live(host, want)
    assert "foreign" in state["unread"]["networks vfwarp-pool-red"]


def test_one_read_per_network_and_the_domains_only_when_one_runs(tmp_path):
    """Reading the state asks libvirt the three lists, the running domains'
    names and each owned network's inactive XML: not each running network's
    live XML too (a re-apply at 32 tenants made 67 virsh commands, ~80 ms each
    on a TCG lab host). A running domain's XML is read once per read, and only
    when a domain runs; it finds who uses which network."""
    host = VirshHost(PF, numvfs=4)
    want = compiled(tmp_path, **{"red.yaml": RED, "blue.yaml": BLUE})
    assert apply(tmp_path, host, want)[1].result == "applied"
    host.add("<network><name>default</name><forward mode='nat'/></network>")
    host.virsh_cmds.clear()
    m = model(host, want)
    live = m.read(host)
    assert sorted(host.virsh_cmds) == sorted(
        [("net-list", "--all", "--name"), ("net-list", "--name"),
         ("net-list", "--all", "--name", "--autostart"), ("list", "--name"),
         ("net-dumpxml", "--inactive", "--", "vfwarp-blue"),
         ("net-dumpxml", "--inactive", "--", "vfwarp-red")]), host.virsh_cmds
    assert [live["networks"][n]["_users"] for n in ("vfwarp-blue", "vfwarp-red")] == [[], []]
    host.use("t1", "vfwarp-red")
    host.use("t2", "vfwarp-red")
    host.virsh_cmds.clear()
    live = model(host, want).read(host)
    assert sorted(c for c in host.virsh_cmds if c[0] == "dumpxml") == \
        [("dumpxml", "--", "t1"), ("dumpxml", "--", "t2")]
    assert live["networks"]["vfwarp-red"]["_users"] == ["t1", "t2"]
    assert live["networks"]["vfwarp-blue"]["_users"] == []


def test_a_network_in_use_is_not_restarted_unless_allowed(tmp_path):
    host = VirshHost(PF, numvfs=4)
    a = compiled(tmp_path, **{"red.yaml": RED})
    assert apply(tmp_path, host, a)[1].result == "applied"
    host.use("t1", "vfwarp-red")
    before = host.state()
    b = compiled(tmp_path, **{"red.yaml": RED.replace("300", "301")})
    with pytest.raises(network_layer.Refused, match=r"in use by the running domain\(s\) t1"):
        apply(tmp_path, host, b)
    with pytest.raises(network_layer.Refused, match="t1"):
        apply(tmp_path, host, compiled(tmp_path))                       # red deleted
    assert host.state() == before
    changes = plan.diff(plan.read_live(host, b), b)
    assert [str(c) for c in changes if c.layer == "network"] == \
        ["~ network vfwarp-red vlan: 300 -> 301  [detach]"]
    _, out = apply(tmp_path, host, b, refuse_in_use=False)
    assert out.result == "applied"
    assert "<tag id='301'" in host.virsh(URI, ["net-dumpxml", "--", "vfwarp-red"]).stdout


def test_hand_changes_are_drift_and_apply_restores(tmp_path):
    host = VirshHost(PF, numvfs=4)
    want = compiled(tmp_path, **{"red.yaml": RED, "blue.yaml": BLUE})
    m, _ = apply(tmp_path, host, want)
    host.nets["vfwarp-red"].config = host.nets["vfwarp-red"].config.replace("'300'", "'302'") \
        .replace('"300"', '"302"')
    host.nets["vfwarp-blue"].running = None                  # virsh net-destroy by hand
    host.nets["vfwarp-blue"].autostart = False
    changes = [str(c) for c in plan.diff(plan.read_live(host, want), want)
               if c.layer == "network"]
    assert changes == ["~ network vfwarp-blue active: false -> true  [hitless]",
                       "~ network vfwarp-blue autostart: false -> true  [hitless]",
                       "~ network vfwarp-red vlan: 302 -> 300  [hitless]"], changes
    del host.nets["vfwarp-red"]                               # net-undefine by hand
    changes = [str(c) for c in plan.diff(plan.read_live(host, want), want)
               if c.layer == "network" and "red" in c.obj]
    assert changes == ["+ network vfwarp-red network: (none) -> tenant red, vfs 0,1, vlan 300  [hitless]"]
    _, out = apply(tmp_path, host, want)
    assert out.result == "applied", out.reason
    assert layers.mismatches(m.read(host), m.target(want)) == []


def test_without_libvirt_the_layer_is_reported_not_applied(tmp_path):
    want = compiled(tmp_path, **{"red.yaml": RED})
    host = VirshHost(PF, numvfs=4)
    host.tools = set()                                          # no virsh on this host
    m = layers.PfHost.for_desired(host, want)
    assert m.networks is None and "networks" not in m.scope or m.scope["networks"] is None
    assert layers.unavailable(m, want) == [("networks", layers.UNAVAILABLE["networks"])]
    assert "networks" not in m.target(want)


def test_every_virsh_command_goes_through_the_session_odd_names_after_a_double_dash(tmp_path):
    """No virsh process of its own (VirshHost fails the test if one starts):
    every read and step is a command of the run's co-process; a name, even
    one virsh's parser would split or read as an option, is passed after
    `--` (quoted by the session: test_virsh_session.py on a real virsh)."""
    host = VirshHost(PF, numvfs=4)
    host.add(OWNED_XML.replace("function='0x4'", "function='0x3'"))
    host.add(FOREIGN_XML.replace("vfwarp-pool-red", "vfwarp-pool red;'x"), active=False)
    host.add(FOREIGN_XML.replace("vfwarp-pool-red", "vfwarp---all"), active=False)
    want = compiled(tmp_path, **{"red.yaml": RED.replace("{range: 0-1}", "{indices: [1, 0]}"),
                                 "blue.yaml": BLUE})
    m, out = apply(tmp_path, host, want)
    assert out.result == "applied", out.reason
    assert m._foreign == ["vfwarp---all", "vfwarp-pool red;'x"]
    assert ("net-dumpxml", "--inactive", "--", "vfwarp-pool red;'x") in host.virsh_cmds
    assert ("net-start", "--", "vfwarp-blue") in host.virsh_cmds
    assert host.sessions == {URI}
    assert not [c for c in host.calls if c[0] == "virsh" and len(c) < 5]


def test_a_failed_virsh_command_is_its_steps_and_nothing_after_it_runs(tmp_path):
    """The co-process goes on after a failed command, the transaction must
    not: net-start of green fails (its definition ran: the step counts as
    run and is undone), the steps after it never reach virsh."""
    host = VirshHost(PF, numvfs=4)
    a = compiled(tmp_path, **{"red.yaml": RED})
    assert apply(tmp_path, host, a)[1].result == "applied"
    before = host.state()
    start = host._net_start

    def refuse_green(args, data, stdin):
        if data == ["vfwarp-green"]:
            raise VirshError("Failed to start network vfwarp-green\nerror: internal error: "
                             "no free VF")
        return start(args, data, stdin)
    host._net_start = refuse_green
    b = compiled(tmp_path, **{"red.yaml": RED.replace("300", "301"),
                              "green.yaml": "version: 1\nkind: tenant\nname: green\nvfs: {indices: [3]}\n"})
    host.virsh_cmds.clear()
    _, out = apply(tmp_path, host, b)
    assert (out.result, out.ran) == ("restored", 1), out.reason
    assert "step 1 (networks vfwarp-green: define, start)" in out.reason
    assert "no free VF" in out.reason
    assert host.state() == before
    ran = [c for c in host.virsh_cmds if c[0] not in ("net-list", "net-dumpxml", "list")]   # not reads
    assert ran == [("net-define", "/dev/stdin"), ("net-autostart", "--", "vfwarp-green"),
                   ("net-start", "--", "vfwarp-green"),
                   # undo of step 1, last first; red's step 2 never ran
                   ("net-destroy", "--", "vfwarp-green"), ("net-undefine", "--", "vfwarp-green")], ran


def test_journal_scope_and_steps_are_json():
    host = VirshHost(PF, numvfs=4)
    m = layers.model_from("pf", {"pf": PF, "networks": URI})
    assert m.networks == URI and m.refuse_in_use is False       # restoring never refuses
    step = network_layer.steps(URI, PF, {}, {"vfwarp-x": network_layer.target(
        {"forward": "hostdev", "vfs": [0], "vlan": None}, "x")}, [], True, Step)[0]
    assert Step.from_json(json.loads(json.dumps(step.as_json()))).do == step.do
    assert host.calls == []


def test_the_probe_reads_the_files_networks_with_the_lists_missing_ones_are_no_error(tmp_path):
    """The networks the files name are read by the probe, with the lists
    (re-apply, plan, drift ask nothing again); one the files do not name (a
    deleted tenant's) is read by the snapshot; a network the files name
    that does not exist yet is not asked for; a virsh error fails the read."""
    host = VirshHost(PF, numvfs=4)
    host.add(OWNED_XML)                                       # vfwarp-red, owned
    want = compiled(tmp_path, **{"red.yaml": RED, "blue.yaml": RED.replace("red", "blue").replace(
        "0-1", "2-3").replace("300", "301")})
    m = layers.PfHost.for_desired(host, want)
    probed = list(host.virsh_cmds)
    assert ("net-dumpxml", "--inactive", "--", "vfwarp-red") in probed
    assert not [c for c in probed if "vfwarp-blue" in c]      # missing: not asked
    host.virsh_cmds.clear()
    m.read(host)
    assert host.virsh_cmds == [], host.virsh_cmds              # the snapshot asked nothing again
    want_blue_only = compiled(tmp_path, **{"blue.yaml": RED.replace("red", "blue")})
    m = layers.PfHost.for_desired(host, want_blue_only)
    host.virsh_cmds.clear()
    m.read(host)
    assert ("net-dumpxml", "--inactive", "--", "vfwarp-red") in host.virsh_cmds   # no file names it
    # a virsh error fails the read
    host.virsh = lambda uri, args, stdin=None: Result(("virsh",), 1, "",
                                                       "error: failed to connect to the hypervisor\n")
    with pytest.raises(live.LiveError, match="failed to connect"):
        network_layer.lists(host, URI, ["vfwarp-blue"])
