# Ansible's linear strategy, run through Mitogen when the controller has it.
#
# Why: under TCG every module run on a lab host pays a fresh Python
# interpreter, the AnsiballZ unzip and the import (compiled from source each
# time: zipimport keeps no bytecode) of ansible.module_utils: 2-3 s per task and
# host, 154 s for an unchanged site.yml. Mitogen keeps one interpreter per host
# over the ssh connection and caches the modules it sent: the same run took
# 24 s (docs/provisioning.md "Speed"). The play's semantics are linear's
# (serial, max_fail_percentage, check and diff mode), so the playbooks do not
# depend on it: without Mitogen this is plain linear, with a warning.
from __future__ import annotations

DOCUMENTATION = """
name: vfwarp_linear
short_description: linear, through Mitogen when it is installed
description:
  - Ansible's linear strategy. When the controller can import Mitogen
    (ansible_mitogen, pinned in requirements-ansible.txt), modules run in one
    persistent interpreter per host; otherwise plain linear.
author: vfwarp
"""

from ansible.utils.display import Display

try:
    import ansible_mitogen.loaders
    import ansible_mitogen.strategy
except ImportError as e:                      # an operator's controller without Mitogen
    from ansible.plugins.strategy.linear import StrategyModule  # noqa: F401
    Display().warning(f"vfwarp_linear: Mitogen not importable ({e}); plain linear (slower)")
else:
    _Linear = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)

    class StrategyModule(ansible_mitogen.strategy.StrategyMixin, _Linear):
        pass
