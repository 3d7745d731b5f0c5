#!/usr/bin/env bash
# Install the pinned Ansible controller (requirements-ansible.txt) into a venv
# in the cache, outside the clone: $VFW_CACHE/ansible-<hash of the requirements>/.
# Prints the venv's bin directory as the last line. Re-running is a no-op.
#   PATH=$(provisioning/install-ansible.sh | tail -n1):$PATH
set -euo pipefail
source "$(dirname "$0")/../lab/common.sh"

req=requirements-ansible.txt
venv="$VFW_CACHE/ansible-$(vfw_hash_paths "$req")"
if [ ! -f "$venv/.done" ]; then
  step "Installing $(grep -v '^#' "$VFW_TOP/$req" | tr '\n' ' ')into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$VFW_TOP/$req" >&2
  touch "$venv/.done"
fi
echo "$venv/bin"
