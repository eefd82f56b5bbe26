"""The kernel's loops over a worker's lanes are int32 while loops, not numba range loops.

numba lowers ``range(a, b, step)`` to a 64-bit trip count with a sign test of the step;
in the kernel that was a third of its code and measurably slower (cumbe/kernel/__init__.py,
docs/gpu-performance.md).  Nothing breaks if one comes back, so this reads the sources."""

import ast
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[1] / "cumbe" / "kernel"


def strided_range_loops(source: str) -> list[int]:
    """Lines of the ``for ... in range(a, b, step)`` loops in ``source``."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call)
            and getattr(node.iter.func, "id", None) == "range" and len(node.iter.args) == 3]


def test_finds_a_strided_range_loop():
    src = ("def f(n, G):\n    for i in range(0, n, G):\n        pass\n"
           "    for j in range(n):\n        pass\n")
    assert strided_range_loops(src) == [2]


def test_kernel_has_no_strided_range_loops():
    found = {p.name: lines for p in sorted(KERNEL.glob("*.py"))
             if (lines := strided_range_loops(p.read_text()))}
    assert not found, f"group-strided range loops (write them as int32 while loops): {found}"
