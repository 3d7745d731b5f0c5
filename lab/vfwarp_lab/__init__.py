"""vfwarp's hardware-less lab: emulated hypervisor hosts with the emulated
adapter, for tests, demos and benchmarks. See lab/README.md."""
from .hosts import Lab, HostSpec  # noqa: F401
from .paths import LabError, Image  # noqa: F401
