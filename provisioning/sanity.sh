#!/usr/bin/env bash
# ansible-test sanity on the collection, with the pinned controller
# (install-ansible.sh). ansible-test builds a virtual environment per test; its
# pip bootstrap script is served by provisioning/get-pip-standin.py, from a
# HOME of its own in the cache (so nothing lands in the user's ~/.ansible).
#   provisioning/sanity.sh [ansible-test sanity options]
set -euo pipefail
source "$(dirname "$0")/../lab/common.sh"
bin=$("$VFW_TOP/provisioning/install-ansible.sh" | tail -n1)
py=$("$bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pipver=$("$bin/python" - <<'PY'
import re, ansible_test, os
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
print(re.search(r"pip='([0-9.]+)'", src).group(1))
PY
)
home="$VFW_CACHE/ansible-test-home"
mkdir -p "$home/.ansible/test/cache"
cp "$VFW_TOP/provisioning/get-pip-standin.py" "$home/.ansible/test/cache/get_pip_${pipver//./_}.py"
cd "$VFW_TOP/provisioning/ansible_collections/vfwarp/fleet"
rm -rf tests/output
HOME=$home PATH="$bin:$PATH" ansible-test sanity --venv --python "$py" "$@"
status=$?
rm -rf tests/output
exit $status
