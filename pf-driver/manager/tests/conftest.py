"""Make the manager package importable from pf-driver/manager/ (no install)."""
import sys
from pathlib import Path

MANAGER = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(MANAGER))
