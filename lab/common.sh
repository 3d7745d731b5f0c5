# shellcheck shell=bash
# Shared settings for the lab scripts: where caches live (outside the clone,
# so fresh clones reuse them), and small helpers.
VFW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VFW_CACHE=${VFWARP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vfwarp}
mkdir -p "$VFW_CACHE"

# The VF's kernel modules in load order: vfwarp_vf (the PCI function: netdev,
# mailbox, an RDMA auxiliary device per VF while devlink enable_rdma is on)
# and vfwarp_rdma (the iWARP ib_device bound to it). The lab tests
# (tests/lab/lib/pf.py VF_MODULES) and the hypervisor role
# (hypervisor_modules) list the same two.
VFW_VF_MODULES="vfwarp_vf vfwarp_rdma"

step() { printf '\n==> %s\n' "$*"; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# Content hash of files (paths relative to the repo top), stable across clones.
vfw_hash_paths() {
  (cd "$VFW_TOP" && find "$@" -type f ! -path '*/build/*' ! -name '*.o' 2>/dev/null |
     LC_ALL=C sort | xargs -r sha256sum) | sha256sum | cut -c1-16
}

# Run a command with a heartbeat line every 30 s so long steps show progress.
with_progress() {
  local label=$1; shift
  local start=$SECONDS next=30
  "$@" & local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    if kill -0 "$pid" 2>/dev/null && (( SECONDS - start >= next )); then
      printf '    ... %s: %ds\n' "$label" $((SECONDS - start))
      next=$((next + 30))
    fi
  done
  wait "$pid"
}
