"""Every file of the invalid corpus is refused with exactly its expected
error: one error, in that file, at LINE:COL, with the rule and message
fragment its header states (tests/policy/corpus.py describes the headers)."""
import re

import pytest

import corpus

CASES = corpus.cases()
LINE_FORMAT = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): error\[(?P<rule>[a-z0-9-]+)\]: "
                         r"(?P<msg>.+?)(?: \(see (?P<other>[^:]+:\d+:\d+)\))?$")


def test_corpus_is_large_and_distinct():
    assert len(CASES) >= 40
    mistakes = [corpus.header(p)["mistake"] for p in CASES]
    assert len(set(mistakes)) == len(mistakes)
    assert all(corpus.expectation(corpus.header(p)) for p in CASES), \
        [p.name for p in CASES if not corpus.expectation(corpus.header(p))]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_refused_at_expected_place(path):
    line, col, rule, fragment = corpus.expectation(corpus.header(path))
    errors = corpus.run(path)
    assert len(errors) == 1, "\n".join(map(str, errors)) or "accepted"
    e = errors[0]
    assert (e.where.file, e.where.line, e.where.col, e.rule) == (str(path), line, col, rule), str(e)
    assert fragment in e.message, str(e)
    m = LINE_FORMAT.match(str(e))
    assert m and m["file"] == str(path) and m["rule"] == rule, str(e)
    if e.other is not None:
        assert m["other"] == str(e.other)


CROSS_FILE = {"vf-overlap": "base/blue.yaml", "vlan-shared": "base/blue.yaml",
              "mac-duplicate": "base/blue.yaml", "tenant-duplicate": "base/blue.yaml",
              "guarantee-over-line": "base/host.yaml", "vf-past-num-vfs": "base/host.yaml",
              "guarantee-over-class": "base/host.yaml"}


@pytest.mark.parametrize("name,other", sorted(CROSS_FILE.items()))
def test_cross_file_errors_name_both_places(name, other):
    (e,) = corpus.run(corpus.INVALID / f"{name}.yaml")
    assert e.other is not None and e.other.file == str(corpus.INVALID / other), str(e)
