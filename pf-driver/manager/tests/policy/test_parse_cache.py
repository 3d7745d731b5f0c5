"""parse_cache.py: valid files remembered by content; any change to a file
(or to the manager) is checked afresh, invalid files never kept, and a
cache file others could have written is not read."""
import os
import pickle
import shutil
from pathlib import Path

import pytest

from vfwarp_manager.policy import parse_cache, validate as policy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "qos"


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "pol"
    shutil.copytree(EXAMPLE, d)
    return d


def load(files, state, **kw):
    c = parse_cache.Cache(str(state), create=True)
    return policy.load([str(files)], cache=c, **kw), c


def snapshot(p):
    return [(f.path, f.data, f.locs) for f in [p.host] + [t.file for t in p.tenants]], \
        {t.name: t.vfs for t in p.tenants}


def test_unchanged_files_are_not_parsed_again_and_load_the_same(files, tmp_path, monkeypatch):
    first, c = load(files, tmp_path / "s")
    assert (c.hits, c.misses) == (0, 3)
    assert oct(os.stat(tmp_path / "s" / parse_cache.NAME).st_mode & 0o777) == "0o600"

    def no_parse(path, text):
        raise AssertionError(f"{path} parsed again")
    monkeypatch.setattr(policy, "check_file", no_parse)
    again, c = load(files, tmp_path / "s")
    assert (c.hits, c.misses) == (3, 0) and snapshot(again) == snapshot(first)
    # the checks across files still run: here against sriov_totalvfs
    with pytest.raises(policy.PolicyInvalid) as e:
        load(files, tmp_path / "s", totalvfs=2)
    assert {x.rule for x in e.value.errors} == {"num-vfs-past-totalvfs", "vf-past-totalvfs"}


def test_a_changed_file_is_checked_afresh_and_an_invalid_one_never_kept(files, tmp_path):
    load(files, tmp_path / "s")
    red = files / "red.yaml"
    red.write_text(red.read_text().replace("tx_weight: 3", "tx_weight: 4"))
    p, c = load(files, tmp_path / "s")
    assert (c.hits, c.misses) == (2, 1)
    assert [t for t in p.tenants if t.name == "red"][0].data["rate"]["tx_weight"] == 4
    red.write_text(red.read_text().replace("tx_weight: 4", "tx_wieght: 4"))
    for _ in range(2):
        with pytest.raises(policy.PolicyInvalid) as e:
            load(files, tmp_path / "s")
        assert [x.rule for x in e.value.errors] == ["unknown-key"]


def test_other_manager_source_is_a_miss(files, tmp_path, monkeypatch):
    load(files, tmp_path / "s")
    monkeypatch.setattr(parse_cache, "_digest", "another version")
    assert load(files, tmp_path / "s")[1].hits == 0


def test_a_cache_others_can_write_or_a_corrupt_one_is_not_used(files, tmp_path):
    load(files, tmp_path / "s")
    os.chmod(tmp_path / "s", 0o777)
    assert load(files, tmp_path / "s")[1].hits == 0
    os.chmod(tmp_path / "s", 0o700)
    os.chmod(tmp_path / "s" / parse_cache.NAME, 0o666)
    assert load(files, tmp_path / "s")[1].hits == 0
    os.chmod(tmp_path / "s" / parse_cache.NAME, 0o600)
    assert load(files, tmp_path / "s")[1].hits == 3
    (tmp_path / "s" / parse_cache.NAME).write_bytes(pickle.dumps(["not", "a", "dict"])[:7])
    p, c = load(files, tmp_path / "s")
    assert c.hits == 0 and len(p.tenants) == 2


def test_a_cache_hit_imports_no_yaml(files, tmp_path):
    """Start-up (docs/policy.md "Speed"): PyYAML (pure Python on the hosts)
    is imported only to parse a file; a load whose files all come from the
    cache never imports it, nor does importing the CLI. A fresh process, so
    that nothing imported by other tests hides an import."""
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import vfwarp_manager.cli.vfwarpctl; "
            "from vfwarp_manager.policy import parse_cache, validate as policy\n"
            "c = parse_cache.Cache(sys.argv[2], create=True)\n"
            "policy.load([sys.argv[3]], cache=c)\n"
            "print(c.hits, c.misses, 'yaml' in sys.modules)")
    manager = str(Path(__file__).resolve().parents[2])
    run = lambda: subprocess.run([sys.executable, "-c", code, manager, str(tmp_path / "s"), str(files)],  # noqa: E731
                                 capture_output=True, text=True, check=True).stdout.split()
    assert run() == ["0", "3", "True"]             # first load: parsed, PyYAML needed
    assert run() == ["3", "0", "False"]            # cache hits: no PyYAML
