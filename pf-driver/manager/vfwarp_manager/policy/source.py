"""Read one policy file into PyYAML's node tree, which keeps every value's
position (PyYAML's compose step; its marks are 0-based, errors are 1-based).

Working on nodes rather than on the loaded dict is what lets every error name
file:line:column, and lets the validator see what yaml.safe_load hides:
a key written twice (safe_load keeps the last silently), and YAML 1.1's
surprises (`yes`/`on` read as booleans, 10:20:30:40:50:60 read as a base-60
integer) before they become wrong values.

PyYAML is imported on first use, not with this module: a run whose files all
come from the parse cache (parse_cache.py) never parses, and importing the
pure-Python PyYAML is a third of a lab host's start-up (docs/policy.md "Speed").
The node tests below use the nodes' own `id` for the same reason.
"""
from .errors import PolicyError, Where

MAX_FILE_BYTES = 1 << 20       # a policy file is a page of text; bound what we parse
# A policy file nests five levels at most (tenant, acl, a rule, police, its
# rate); PyYAML composes nested collections by recursion, and 500 brackets
# exhaust Python's stack (RecursionError) before any rule is checked.
MAX_DEPTH = 32
_loader = None


def _depth_limited_loader():
    """PyYAML's safe loader that refuses, at its place, a collection nested
    deeper than MAX_DEPTH (made on first use: PyYAML is imported lazily)."""
    global _loader
    if _loader is None:
        import yaml

        class DepthLimitedLoader(yaml.SafeLoader):
            class TooDeep(yaml.composer.ComposerError):
                pass

            depth = 0

            def compose_node(self, parent, index):
                self.depth += 1
                try:
                    if self.depth > MAX_DEPTH:
                        raise self.TooDeep(None, None, f"nested deeper than {MAX_DEPTH} levels "
                                           "(a policy file needs 5)", self.peek_event().start_mark)
                    return super().compose_node(parent, index)
                finally:
                    self.depth -= 1
        _loader = DepthLimitedLoader
    return _loader


def where(path, node):
    return Where(path, node.start_mark.line + 1, node.start_mark.column + 1)


def compose_file(path, text):
    """(root node or None, [PolicyError]) for one file's text."""
    if len(text.encode()) > MAX_FILE_BYTES:
        return None, [PolicyError(Where(path, 1, 1), "file-size",
                                  f"file is larger than {MAX_FILE_BYTES} bytes")]
    import yaml
    loader = _depth_limited_loader()
    try:
        docs = list(yaml.compose_all(text, Loader=loader))
    except loader.TooDeep as e:
        return None, [PolicyError(Where(path, e.problem_mark.line + 1, e.problem_mark.column + 1),
                                  "yaml-depth", e.problem)]
    except yaml.MarkedYAMLError as e:
        m = e.problem_mark or e.context_mark
        w = Where(path, m.line + 1, m.column + 1) if m else Where(path, 1, 1)
        return None, [PolicyError(w, "yaml-syntax", f"{e.problem or e.context}")]
    except yaml.YAMLError as e:     # reader errors (bad characters) carry no mark
        return None, [PolicyError(Where(path, 1, 1), "yaml-syntax", str(e).splitlines()[0])]
    docs = [d for d in docs if d is not None]
    if not docs:
        return None, [PolicyError(Where(path, 1, 1), "empty-file", "file holds no YAML document")]
    if len(docs) > 1:
        return None, [PolicyError(where(path, docs[1]), "multiple-documents",
                                  "one policy per file: a second YAML document starts here")]
    return docs[0], []


def scalar_value(node):
    """The value PyYAML's safe loader would give a scalar node."""
    import yaml
    return yaml.SafeLoader("").construct_object(node, deep=True)


# PyYAML's node classes say what they are in `id` ("scalar", "sequence", "mapping")
def is_scalar(node):
    return getattr(node, "id", None) == "scalar"


def is_mapping(node):
    return getattr(node, "id", None) == "mapping"


def is_sequence(node):
    return getattr(node, "id", None) == "sequence"
