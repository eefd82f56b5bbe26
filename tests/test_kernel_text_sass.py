"""tools/kernel_text.py --sass: nvdisasm's listing counted by the source line it attributes
each instruction to (predicated ones too), with its spill loads and stores and barrier moves.
The listing below is nvdisasm -g's form (sm_90), abridged."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "kernel_text.py"

LISTING = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
\t//## File "/x/cumbe/kernel/stages.py", line 229
        /*0c40*/                   LDL R24, [R1+0x48]                    (*"SpillRefill"*);
        /*0c50*/              @!P0 STL [R1+0x10], R3 ;
        /*0c60*/                   BMOV.32.CLEAR R4, B1 ;
        /*0c70*/               @P1 BRA 0x1260 ;
\t//## File "/x/cumbe/kernel/stages.py", line 224
        /*1260*/                   LDL.64 R2, [R1+0xdc] ;
        /*1270*/                   IMAD R0, R2, R3, RZ ;
"""


def test_instructions_are_counted_by_their_line_with_spills_and_barrier_moves():
    spec = importlib.util.spec_from_file_location("kernel_text", TOOL)
    kt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kt)
    got = kt.sass_by_line(LISTING)
    assert got == {("(no line)", 0): [1, 0, 0, 0],
                   ("/x/cumbe/kernel/stages.py", 229): [4, 1, 1, 1],
                   ("/x/cumbe/kernel/stages.py", 224): [2, 1, 0, 0]}
