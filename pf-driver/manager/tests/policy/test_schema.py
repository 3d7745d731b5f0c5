"""The JSON Schema for editors is generated from the validator's own model
(format_v1): the committed file must equal the generated one, and both must
agree on the examples: every valid example passes the schema, and every
invalid case whose mistake lies within one file's structure fails it."""
import io
import json
from pathlib import Path

import pytest
import yaml

import corpus
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.policy import format_v1

MANAGER = Path(__file__).resolve().parents[2]
SCHEMA_FILE = MANAGER / "schema" / "vfwarp-policy-v1.schema.json"
# Rules the schema can express (one file's structure); the rest need the
# validator (positions in other files, sums, live sysfs).
STRUCTURAL = {"unknown-key", "type", "range", "enum", "missing-key", "one-of", "version",
              "list-length", "syntax", "rate-unit", "mac-syntax"}


def test_committed_schema_is_the_generated_one():
    out = io.StringIO()
    cli.main(["schema"], out=out)
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(out.getvalue()) == format_v1.json_schema(), \
        "regenerate: pf-driver/manager/vfwarpctl schema > " + str(SCHEMA_FILE.relative_to(MANAGER))


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))


VALID = sorted((MANAGER / "examples").rglob("*.yaml")) + sorted((corpus.INVALID / "base").glob("*.yaml"))


@pytest.mark.parametrize("path", VALID, ids=[p.name for p in VALID])
def test_schema_accepts_valid_files(path):
    errs = list(_validator().iter_errors(yaml.safe_load(path.read_text())))
    assert not errs, [e.message for e in errs]


SCHEMA_CASES = [p for p in corpus.cases() if corpus.expectation(corpus.header(p))[2] in STRUCTURAL]


def test_enough_structural_cases():
    assert len(SCHEMA_CASES) >= 15


@pytest.mark.parametrize("path", SCHEMA_CASES, ids=[p.stem for p in SCHEMA_CASES])
def test_schema_refuses_structural_mistakes(path):
    assert not _validator().is_valid(yaml.safe_load(path.read_text()))
