"""The policy files of the libvirt network tests (a host with 4 VFs, tenants
red and blue with a VLAN each), compiled. Shared by the network layer's tests
and the CLI's `--skip networks` tests."""
from vfwarp_manager.layers import desired
from vfwarp_manager.policy import validate as policy

PF = "enp1s0"
HOST = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, line_rate: 10gbit}\n"
RED = "version: 1\nkind: tenant\nname: red\nvfs: {range: 0-1}\nvlan: 300\n"
BLUE = "version: 1\nkind: tenant\nname: blue\nvfs: {indices: [3, 2]}\nvlan: 100\n"


def compiled(tmp_path, host=HOST, **files):
    d = tmp_path / "pol"
    d.mkdir(exist_ok=True)
    for f in d.glob("*.yaml"):
        f.unlink()
    for name, text in dict({"host.yaml": host}, **files).items():
        (d / name).write_text(text)
    return desired.compile_policy(policy.load([str(d)]))
