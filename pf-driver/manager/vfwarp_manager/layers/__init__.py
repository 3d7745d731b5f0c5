"""The kernel interfaces the manager changes, one module each (sriov, vfs,
eswitch, rate, dcb, flower, network), the readers of the live state (live),
actions and steps, the policy compiled per layer (desired) and the PF's
host model that puts the layers in order (host). Imports policy/ and the
modules at the top."""
