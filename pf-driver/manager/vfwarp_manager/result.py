"""What one run of a tool gives back (Result), and the error a failed run
raises (ToolError). Below runner.py and virsh_session.py, which both make
Results: the session without importing the runner that starts it."""
from dataclasses import dataclass


@dataclass
class Result:
    argv: tuple
    returncode: int
    stdout: str
    stderr: str


class ToolError(RuntimeError):
    def __init__(self, result):
        self.result = result
        super().__init__(f"{' '.join(result.argv)}: exit {result.returncode}: "
                         f"{result.stderr.strip()[:400]}")
