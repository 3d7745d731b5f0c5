#!/usr/bin/env bash
# Add the vfwarp provider to an rdma-core source tree (idempotent):
#   providers/vfwarp/            <- vf-driver/rdma-core/providers/vfwarp/ + the
#                                   hardware header include/vfwarp/vfwarp_rdma.h
#   kernel-headers/rdma/vfwarp-abi.h <- include/vfwarp/vfwarp-abi.h (the uverbs
#                                   udata shared with vfwarp_vf.ko)
#   CMakeLists.txt               += add_subdirectory(providers/vfwarp)
#   kernel-headers/CMakeLists.txt += rdma/vfwarp-abi.h (published, and turned
#                                   into kernel-abi/vfwarp-abi.h for DECLARE_DRV_CMD)
# Usage: integrate.sh RDMA_CORE_DIR [REPO_TOP]
set -euo pipefail
tree=${1:?usage: integrate.sh RDMA_CORE_DIR [REPO_TOP]}
top=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -f "$tree/CMakeLists.txt" ] && [ -f "$tree/kernel-headers/CMakeLists.txt" ] ||
  { echo "integrate.sh: $tree is not an rdma-core source tree" >&2; exit 1; }

mkdir -p "$tree/providers/vfwarp"
# -c: only changed content gets a new mtime, so ninja rebuilds only that.
rsync -rc --delete --exclude vfwarp_rdma.h "$top/vf-driver/rdma-core/providers/vfwarp/" "$tree/providers/vfwarp/"
rsync -c "$top/include/vfwarp/vfwarp_rdma.h" "$tree/providers/vfwarp/vfwarp_rdma.h"
rsync -c "$top/include/vfwarp/vfwarp-abi.h" "$tree/kernel-headers/rdma/vfwarp-abi.h"

if ! grep -q '^add_subdirectory(providers/vfwarp)' "$tree/CMakeLists.txt"; then
  grep -q '^add_subdirectory(providers/siw)' "$tree/CMakeLists.txt" ||
    { echo "integrate.sh: no add_subdirectory(providers/siw) anchor in $tree/CMakeLists.txt" >&2; exit 1; }
  sed -i 's|^add_subdirectory(providers/siw)$|&\nadd_subdirectory(providers/vfwarp)|' "$tree/CMakeLists.txt"
fi
# Both lists in kernel-headers/CMakeLists.txt name rdma/siw-abi.h: add ours after each.
if ! grep -q 'rdma/vfwarp-abi.h' "$tree/kernel-headers/CMakeLists.txt"; then
  n=$(grep -c '^  rdma/siw-abi.h$' "$tree/kernel-headers/CMakeLists.txt" || true)
  [ "$n" = 2 ] || { echo "integrate.sh: expected rdma/siw-abi.h twice in kernel-headers/CMakeLists.txt, found $n" >&2; exit 1; }
  sed -i 's|^  rdma/siw-abi.h$|&\n  rdma/vfwarp-abi.h|' "$tree/kernel-headers/CMakeLists.txt"
fi
