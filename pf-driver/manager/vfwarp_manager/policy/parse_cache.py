"""Policy files already found valid, remembered by their content, so that a
re-apply, plan or drift of unchanged files does not parse them again.

Why: checking a file means composing its YAML node tree (every value's
line:column), and the hosts have PyYAML's pure-Python parser (no libyaml):
with 33 files that is most of a re-apply on a small or emulated host
(bench/policy_bench.py, docs/policy.md "Speed").

What is kept: the result of policy.check_file (a FilePolicy: values and
their places) of each valid file, under a key over the manager's own source,
PyYAML's version, the file's path and its exact text. Any change to either
is a miss, and the file is checked as if there were no cache; invalid files
are never kept (their errors are always found afresh). The checks across
files (VF overlaps, sums, sriov_totalvfs) always run.

Where: STATE_DIR/parsed.pickle, one file holding the entries of the last
load (older ones are dropped), written atomically. It is only read when the
state directory and the file belong to this user and nobody else can write
them (unpickling runs code, so it trusts no file it did not write itself);
otherwise the cache is not used.
"""
import glob
import hashlib
import importlib.util
import os
import pickle
import stat

NAME = "parsed.pickle"
_digest = None


def source_digest():
    """Over the manager's own modules (every .py of the package, its
    subfolders too) and the YAML library's version (its __init__.py, which
    holds __version__: read, not imported, so that a cache hit never imports
    PyYAML)."""
    global _digest
    if _digest is None:
        h = hashlib.sha256(b"pyyaml\0")
        spec = importlib.util.find_spec("yaml")
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            with open(spec.origin, "rb") as fh:
                h.update(fh.read() + b"\0")
        top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # vfwarp_manager/
        for f in sorted(glob.glob(os.path.join(top, "**", "*.py"), recursive=True)):
            with open(f, "rb") as fh:
                h.update(os.path.relpath(f, top).encode() + b"\0" + fh.read() + b"\0")
        _digest = h.hexdigest()
    return _digest


def _private(st):
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class Cache:
    def __init__(self, directory, create=False):
        """create: make the directory if it is missing (apply; plan and
        drift only use one that exists: they change nothing)."""
        self.dir, self.create = directory, create
        self.path = os.path.join(directory, NAME)
        self.old, self.new = self._read(), {}
        self.hits = self.misses = 0

    def _read(self):
        try:
            if not _private(os.stat(self.dir)):
                return {}
            with open(self.path, "rb") as f:
                if not _private(os.fstat(f.fileno())):
                    return {}
                doc = pickle.load(f)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, TypeError,
                ImportError):     # ImportError: written by a manager whose modules had other paths
            return {}                  # missing, foreign or unreadable: parse as if none
        return doc if isinstance(doc, dict) else {}

    @staticmethod
    def key(path, text):
        return hashlib.sha256(f"{source_digest()}\0{path}\0".encode() + text.encode()).hexdigest()

    def get(self, path, text):
        k = self.key(path, text)
        fp = self.old.get(k)
        if fp is None:
            self.misses += 1
            return None
        self.hits += 1
        self.new[k] = fp
        return fp

    def put(self, path, text, fp):
        self.new[self.key(path, text)] = fp

    def save(self):
        """Keep the entries of this load (atomically); a failure only costs
        the next run a parse."""
        if self.new.keys() == self.old.keys():
            return
        tmp = f"{self.path}.tmp.{os.getpid()}"
        try:
            if self.create:
                os.makedirs(self.dir, mode=0o700, exist_ok=True)
            if not _private(os.stat(self.dir)):
                return
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                pickle.dump(self.new, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
