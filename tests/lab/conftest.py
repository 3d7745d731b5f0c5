"""Fixtures over the lab launcher (lab/vfwarp_lab) for lab-tier tests.

`lab2` boots two emulated hosts once per session and always tears them down,
also when a test fails or the run is interrupted (SIGTERM/SIGINT included).
"""
import atexit
import os
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lab"))
# the library's asserts report like the tests' own (several came from test modules)
pytest.register_assert_rewrite("lib")
from vfwarp_lab import Image, Lab  # noqa: E402
from lib import provisioned as site  # noqa: E402

_running = []


def _teardown_all(*_):
    while _running:
        _running.pop().down()


atexit.register(_teardown_all)


def _on_signal(signum, frame):
    _teardown_all()
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _on_signal)


@pytest.fixture(scope="session")
def image():
    return Image.default()


@pytest.fixture(scope="session")
def lab2(tmp_path_factory, image):
    # For development: VFWARP_LAB_REUSE=<state dir> of a lab already booted
    # with `labctl --state DIR up -n 2` runs the tests on it and leaves it up.
    reuse = os.environ.get("VFWARP_LAB_REUSE")
    if reuse:
        lab = Lab(Path(reuse), image=image)
        assert sorted(lab.hosts) == ["h1", "h2"], f"{reuse}: no two-host lab there"
        yield lab
        return
    lab = Lab(tmp_path_factory.mktemp("lab2"), image=image)
    _running.append(lab)
    try:
        lab.up(2)
        yield lab
    finally:
        lab.down()
        if lab in _running:
            _running.remove(lab)


# Modules that share the provisioned hosts (lib/provisioned.py) run after every
# other module, which expect bare hosts: test_provisioning.py first (site.yml
# from bare, its scenarios), then test_tenants.py on the VMs site.yml started,
# then what ends a tenant VM for good (a host's reboot). Stable: each module
# keeps its own order. The markers (pytest.ini) choose each module's session in
# tools/lab-tier: a test on the provisioned hosts without `provisioned` would
# run site.yml in the other session's lab, so collection refuses it.
PROVISIONED_ORDER = {"test_provisioning.py": 1, "test_tenants.py": 2}


def pytest_collection_modifyitems(items):
    stray = [item.nodeid for item in items if not item.get_closest_marker("provisioned")
             and ("provisioned" in item.fixturenames or item.path.name in PROVISIONED_ORDER)]
    if stray:
        raise pytest.UsageError("on the provisioned hosts without pytest.mark.provisioned "
                                "(its session in tools/lab-tier): " + ", ".join(stray))

    def rank(item):
        if item.get_closest_marker("after_tenants"):
            return 3
        return PROVISIONED_ORDER.get(item.path.name, 0)
    items.sort(key=rank)


@pytest.fixture(scope="session")
def provisioned(lab2):
    """site.yml run once from bare hosts, with a tenant VM per host; on a
    lab that outlives the session (VFWARP_LAB_REUSE), the hosts made bare again
    at its end (a lab of the session's own is torn down: 159 s saved)."""
    yield site.provision(lab2)
    if os.environ.get("VFWARP_LAB_REUSE"):
        site.bare(lab2)
        for h in site.HOSTS:
            assert "vfwarp_pf" not in lab2.ssh(h, "lsmod").stdout
