"""Where hook scripts installed before the manager had folders find their
body: they run `from vfwarp_manager.libvirt_hook import network_hook`, and
libvirt fails a domain's start when the hook cannot. `vfwarpctl
install-hook` now writes scripts that import libvirt/hook.py; this name
stays until every host has run it again (the hypervisor role does on each
run). Nothing in the package imports this module."""
from .libvirt.hook import network_hook  # noqa: F401
