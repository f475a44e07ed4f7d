"""Makes `op_table` (the op table the gradient and dtype tests share) importable in any of
pytest's import modes, not only the default one that puts this folder on `sys.path`."""

import sys
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
