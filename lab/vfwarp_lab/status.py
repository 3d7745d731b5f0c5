"""What is not built yet, as docs/status.md says (`make demo` step 11).

docs/status.md is the one record of what works, kept true at every landing:
tables with a column headed "state" whose cells begin with one of STATES.
What is not built is every row of those tables whose state is not "done",
its section "Not built yet" first. Nothing here looks at the code: a state
guessed from grep drifts (the demo's old step 11 listed devlink rate as
missing because the driver calls devl_register, not devlink_register).

    lab/not-built [--strict] [STATUS_MD]

prints the list; exit 0 whatever it lists (the demo's exit status says
whether its steps worked), 2 when the file cannot be read; --strict also
exits 1 when a state cell begins with no known state, no table has a
state column or a "Known gaps:" paragraph stands outside the table
(tests/unit/test_not_built.py runs it on the real file).
"""
import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

STATUS_MD = Path(__file__).resolve().parents[2] / "docs" / "status.md"
STATES = ("done", "partial", "not started", "blocked")
NOT_BUILT_SECTION = "Not built yet"


@dataclass
class Row:
    line: int           # 1-based, in the file
    section: str        # the heading above the table, without #'s
    what: str           # the row's first cell
    state: str          # one of STATES, or "" when the cell begins with none
    cell: str           # the state cell as written
    note: str = ""      # the "note" column, where the table has one


def cells(line: str) -> list:
    """The cells of a Markdown table row; `\\|` is a pipe inside a cell."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def state_of(cell: str) -> str:
    plain = re.sub(r"[*_]", "", cell).strip().lower()
    for state in STATES:
        if re.match(re.escape(state) + r"\b", plain):
            return state
    return ""


def rows(text: str) -> list:
    """Every row of every table with a "state" column."""
    out, section = [], ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        is_table = (line.lstrip().startswith("|") and i + 1 < len(lines)
                    and re.fullmatch(r"\s*\|?\s*:?-{3,}.*", lines[i + 1]))
        if not is_table:
            i += 1
            continue
        head = [c.lower() for c in cells(line)]
        i += 2
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            row = cells(lines[i])
            if "state" in head and len(row) == len(head):
                get = dict(zip(head, row)).get
                st = get("state")
                out.append(Row(i + 1, section, row[0], state_of(st), st, get("note", "")))
            elif "state" in head:   # a row the parser cannot split: said, not dropped
                out.append(Row(i + 1, section, row[0], "", lines[i].strip()))
            i += 1
    return out


def short(section: str) -> str:
    """"Issue 19: policy files and `vfwarpctl` — done but ..." -> up to the dash."""
    return re.split(r" — | \(", section, maxsplit=1)[0].strip()


def not_built(all_rows: list) -> list:
    """The rows whose state is not done (unreadable ones too), the section
    "Not built yet" first, then in the file's order."""
    left = [r for r in all_rows if r.state != "done"]
    return sorted(left, key=lambda r: (not r.section.startswith(NOT_BUILT_SECTION), r.line))


def lines_for(left: list, source: str = "docs/status.md") -> list:
    if not left:
        return [f"  (nothing: every row of {source} is done)"]
    out = []
    for r in left:
        where = "" if r.section.startswith(NOT_BUILT_SECTION) else f"; {short(r.section)}"
        if r.state:
            out.append(f"  - {r.what} ({r.state}{where})" + (f": {r.note}" if r.note else ""))
        else:
            out.append(f"  - {r.what} (state not read from {source} line {r.line}: "
                       f"'{r.cell[:60]}')")
    return out


def problems(text: str, all_rows: list) -> list:
    """What --strict refuses: no state table; a state cell that begins with
    none of STATES (write it as "done: ...", "partial: ..."); a paragraph of
    "Known gaps:" outside the table (the demo would not say them: a gap is a
    row of "Not built yet")."""
    out = [] if all_rows else ["no table with a 'state' column"]
    out += [f"line {r.line}: state '{r.cell[:60]}' begins with none of {', '.join(STATES)}"
            for r in all_rows if not r.state]
    out += [f"line {n}: a 'Known gaps' paragraph: make each gap a row of '{NOT_BUILT_SECTION}'"
            for n, line in enumerate(text.splitlines(), 1)
            if re.match(r"\W*known gaps\W*:", line, re.I)]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="What docs/status.md says is not built yet")
    ap.add_argument("status_md", nargs="?", type=Path, default=STATUS_MD)
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 when a state cannot be read")
    args = ap.parse_args(argv)
    try:
        text = args.status_md.read_text()
    except OSError as e:
        print(f"not-built: cannot read {args.status_md}: {e.strerror}", file=sys.stderr)
        return 2
    all_rows = rows(text)
    print(f"From docs/status.md (every row whose state is not done; "
          f"section '{NOT_BUILT_SECTION}' first):")
    print("\n".join(lines_for(not_built(all_rows))))
    bad = problems(text, all_rows)
    if args.strict and bad:
        print("\n".join(f"not-built: {p}" for p in bad), file=sys.stderr)
        return 1
    return 0
