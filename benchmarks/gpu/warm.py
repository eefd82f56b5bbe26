"""Compile cuMBE kernels into numba's on-disk cache, several at once (one process each).

    python benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128

The benchmarks' name for ``python -m cumbe.warm`` (the same arguments and output).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cumbe.warm import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
