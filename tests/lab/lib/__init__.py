"""The lab tests' library: what more than one module of tests/lab does on the
lab's hosts, in one place. The tests import it as `lib` (pytest puts
tests/lab on sys.path; conftest.py puts lab/ there for vfwarp_lab).

  vf.py           VFs in network namespaces vf0, vf1, ... on both hosts
                  (vfs_up), and commands, pings and counters there
  perftest.py     rping's and perftest's ports; perftest run again when it
                  could not sample its clock
  wait.py         eventually(); a server started in the background and waited
                  for until it listens
  qos.py          vfwarp_pf on h1 with every view of the QoS state read back
  congestion.py   h1's uplink at a line rate, iperf3 flows and pings through it
  provisioned.py  the hosts as provisioning/site.yml leaves them (the session
                  fixture `provisioned`)
  tenant.py       the tenant VMs on the provisioned hosts
"""
