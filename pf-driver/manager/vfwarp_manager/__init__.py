"""vfwarp PF manager: tenant policy files compiled into the kernel's standard
interfaces (sysfs sriov_numvfs, `ip link set PF vf N ...`, devlink rate, tc
flower, dcb, libvirt networks). See docs/policy.md."""

FORMAT_VERSION = 1
