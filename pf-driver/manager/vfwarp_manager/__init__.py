"""vfwarp PF manager: tenant policy files compiled into the kernel's standard
interfaces (sysfs sriov_numvfs, `ip link set PF vf N ...`, devlink rate, tc
flower, dcb, libvirt networks). See docs/policy.md.

Laid out as its pipeline, each folder importing only the ones before it:
the modules here (runner, result, virsh_session, timings: how tools run),
policy/ (the files), layers/ (the kernel interfaces, the PF's host model),
txn/ (plan, transaction, journal, lock), libvirt/ (hook, hold), cli/."""

FORMAT_VERSION = 1
