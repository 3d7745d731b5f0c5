"""The lab tests' library: what more than one module of tests/lab does on the
lab's hosts, in one place; a test module keeps its cases and what only it
uses, and imports no other test module. The tests import it as `lib` (pytest
puts tests/lab on sys.path; conftest.py puts lab/ there for vfwarp_lab).

  pf.py           the PF: the adapter's PCI ids, where the hosts see the built
                  modules (MODS, PF_KO), the PF's address in shell (PF_BDF),
                  require_modules(), the PF netdev up with an address (pf_up)
  vf.py           VFs in network namespaces vf0, vf1, ... on both hosts
                  (vfs_up), and commands, pings and counters there
  siw.py          Linux siw (soft-iWARP): its link over a netdev, over each
                  host's PF (siw_over_pf), modules loaded on a test's account
                  unloaded again
  verbs.py        verbs between the VFs: rping_pair, a command in the
                  background (bg), wait_listen, ib_device and `rdma res` counts
  perftest.py     rping's and perftest's ports; perftest run again when it
                  could not sample its clock
  wait.py         eventually(); a server started in the background and waited
                  for until it listens (start_server), and until it exits
                  (server_log)
  switchdev.py    the eswitch mode, representors, a bridge of them, UDP
                  senders/receivers, tc flower filters and their hw counts
  manager.py      vfwarpctl installed on h1 (Host), run with a state dir of its
                  own, its libvirt networks cleaned up
  qos.py          vfwarp_pf on h1 with every view of the QoS state read back
  congestion.py   h1's uplink at a line rate, iperf3 flows and pings through it
  provisioned.py  the hosts as provisioning/site.yml leaves them (the session
                  fixture `provisioned`)
  tenant.py       the tenant VMs on the provisioned hosts
"""
