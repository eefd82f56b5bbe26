#!/usr/bin/env bash
# Build GMBE (github.com/ISCS-ZJU/GMBE) for this GPU with the CUDA toolkit's own CUB (CCCL).
#   bash benchmarks/scale/build_gmbe.sh /path/to/GMBE [sm_90] [SMs, 132]   -> .../bin/MBE_GPU
# Two changes for CUDA 12/13: cudaDeviceProp::clockRate is gone (read the attribute; only used
# with -p), and device-side cudaDeviceSynchronize is gone (only in IterFinderKernel_3, the
# dynamic-parallelism version, which -s 2 does not run: its wait becomes a no-op there).
set -euo pipefail
src=$1/src
arch=${2:-sm_90}
sms=${3:-132}  # the SM count (132 on an H100 SXM)
sed -i 's/clock_rate = dev\.clockRate;/{ int khz = 0; cudaDeviceGetAttribute(\&khz, cudaDevAttrClockRate, 0); clock_rate = khz; }/' \
  "$src/IterFinderGpu.cu"
sed -i 's/cudaStatus = cudaDeviceSynchronize();/cudaStatus = cudaSuccess;/' "$src/IterFinderGpu.cu"
mkdir -p "$1/bin"
# flags of GMBE's CMakeLists.txt (target MBE_GPU), for this GPU's SM count
nvcc -O3 -w -arch="$arch" -rdc=true -DMAX_SM="$sms" -DADV_UNION -DMAX_2_H_DEGREE_BOUND=0x40000 \
  -DMAX_DEGREE_BOUND=0x25000 -DBLOCKS_PER_SM=1 -D__CDPRT_SUPPRESS_SYNC_DEPRECATION_WARNING \
  -DPRUNE_EN -o "$1/bin/MBE_GPU" "$src"/BicliqueFinder.cu "$src"/BiGraph.cu "$src"/main.cu \
  "$src"/Utility.cu "$src"/IterFinderGpu.cu -lcudadevrt
echo "built $1/bin/MBE_GPU"
