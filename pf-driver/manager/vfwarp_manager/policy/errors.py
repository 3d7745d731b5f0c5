"""Policy errors in one stable, one-line format that editors and CI parse:

    FILE:LINE:COL: error[RULE]: MESSAGE
    FILE:LINE:COL: error[RULE]: MESSAGE (see OTHER_FILE:LINE:COL)

LINE and COL are 1-based (PyYAML's marks are 0-based). RULE is a short,
stable identifier (docs/policy.md lists them all); MESSAGE may be reworded.
A cross-file error names the second place in the parenthesis.

What a file says is shown escaped: a value or a file name may hold control
characters (YAML's "\\n" and "\\e" escapes, a newline in a file name), and
printed raw they forge error lines or drive the operator's terminal.
"""
from dataclasses import dataclass
from typing import Optional


QUOTE_MAX = 60          # characters of a value shown in a message


def escaped(text):
    """text with every character that is not printable (control characters,
    line and paragraph separators, bidirectional overrides: str.isprintable)
    written as Python writes it in a literal (\\n, \\x1b, \\u202e)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(text):
    """A value from a file, for a message: escaped, and cut to QUOTE_MAX
    characters (a 5,000-digit number is named, not printed)."""
    if len(text) > QUOTE_MAX:
        text = f"{text[:QUOTE_MAX]}... ({len(text)} characters)"
    return escaped(text)


def quoted(text):
    """shown(text) in quotes."""
    return f"'{shown(text)}'"


@dataclass(frozen=True, order=True)
class Where:
    file: str
    line: int          # 1-based
    col: int           # 1-based

    def __str__(self):
        # escaped for text only: JSON keeps the exact name (json.dump escapes it)
        return f"{escaped(self.file)}:{self.line}:{self.col}"


@dataclass(frozen=True)
class PolicyError:
    where: Where
    rule: str
    message: str
    other: Optional[Where] = None

    def __post_init__(self):
        # Messages quote the files' values; escaped here once, so that every
        # reader of a message (text, JSON, the audit log, Ansible) gets it safe.
        object.__setattr__(self, "message", escaped(self.message))

    def __str__(self):
        s = f"{self.where}: error[{self.rule}]: {self.message}"
        if self.other is not None:
            s += f" (see {self.other})"
        return s

    def as_json(self):
        d = {"file": self.where.file, "line": self.where.line, "column": self.where.col,
             "rule": self.rule, "message": self.message}
        if self.other is not None:
            d["other"] = {"file": self.other.file, "line": self.other.line,
                          "column": self.other.col}
        return d


class PolicyInvalid(Exception):
    """Raised with every error found; nothing may be applied."""

    def __init__(self, errors):
        self.errors = sorted(errors, key=lambda e: (e.where, e.rule))
        super().__init__("\n".join(str(e) for e in self.errors))
