import os, sys
sys.path.insert(0, os.getcwd())
from numba import cuda
from cumbe import kernel as K, buffers as B
kern = K.build(threads=128)
sig = tuple(kern.typeof_pyval(x) for x in B.typing_dummies(cuda))
ov = kern.compile(sig)
sass = ov.inspect_sass()
open(os.environ["OUT"] + "/sass.txt", "w").write(sass)
print("sass lines", sass.count("\n"))
