"""Where the lab finds its artifacts: the cache (outside the clone), the
patched QEMU, the guest image, and the repo's build outputs for guests."""
import os
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
LAB = TOP / "lab"


class LabError(Exception):
    """An error an operator can act on; the CLI prints it as one line."""


def cache_dir() -> Path:
    env = os.environ.get("VFWARP_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "vfwarp"


def qemu_binary() -> Path:
    """The patched QEMU built by lab/build-qemu.sh."""
    env = os.environ.get("VFWARP_QEMU")
    path = Path(env) if env else cache_dir() / "qemu/current/build/qemu-system-x86_64"
    if not path.is_file() or not os.access(path, os.X_OK):
        raise LabError(f"no patched QEMU at {path}: run 'make qemu' (lab/build-qemu.sh)")
    return path


# Firmware from Debian packages (the +ds QEMU source ships no blobs):
# seabios (bios-256k.bin), ipxe-qemu (NIC option ROMs), qemu-system-data
# (linuxboot_dma.bin for -kernel boot).
FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/lib/ipxe/qemu", "/usr/share/qemu"]

# Kernel arguments of every lab kernel under TCG, lab hosts (hosts.py) and tenants
# (tenants.py BOOT_ARGS) alike; measured 2026-11-28:
#  init_on_alloc=0       no zeroing of every kernel allocation
#  mitigations=off       no speculation barriers on each kernel entry/exit (a TCG
#                        CPU needs none); with the above, on a lab host 300
#                        fork+exec 4.5 -> 3.5 s, boot to ssh 55 -> 43 s
#  initcall_blacklist=   three built-in initcalls that took 38, 19 and 19 s of a
#                        nested boot (initcall_debug): the SP800-108 KDF
#                        self-test, the jitter entropy source's own start-up test
#                        (the kernel's RNG seeds without it) and the "encrypted"
#                        key type; nothing in the lab uses them
LEAN_KERNEL_ARGS = ("init_on_alloc=0 mitigations=off "
                    "initcall_blacklist=crypto_kdf108_init,jent_mod_init,init_encrypted")


class Image:
    """A built guest image directory (lab/build-image.sh)."""

    FILES = ("disk.img", "vmlinuz", "initrd.img", "id_ed25519", "kver")

    def __init__(self, path: Path):
        self.path = Path(path)
        missing = [f for f in self.FILES if not (self.path / f).exists()]
        if not self.path.is_dir() or missing or not (self.path / ".done").exists():
            raise LabError(
                f"missing guest image at {self.path}"
                + (f" (lacks {', '.join(missing)})" if self.path.is_dir() and missing else "")
                + ": run 'make image' (lab/build-image.sh)")
        self.disk = self.path / "disk.img"
        self.kernel = self.path / "vmlinuz"
        self.initrd = self.path / "initrd.img"
        self.key = self.path / "id_ed25519"
        self.kver = (self.path / "kver").read_text().strip()

    @classmethod
    def default(cls) -> "Image":
        env = os.environ.get("VFWARP_IMAGE")
        return cls(Path(env) if env else cache_dir() / "images/current")


def guest_share_dir() -> Path:
    """What every host sees read-only at /mnt/vfwarp (modules, tools)."""
    path = TOP / "build" / "guest"
    path.mkdir(parents=True, exist_ok=True)
    return path
