#!/usr/bin/env bash
# Inputs of bad_input.cu, made by nvcc in the program's work directory (cu_program.sh runs this
# before the program and passes ARGS): a cubin of machine code only, and a fatbin holding one
# uncompressed PTX entry (which the program damages).
# usage: bad_input.inputs.sh NVCC WORK
set -eu
nvcc=$1 work=$2
printf '__global__ void twice(int *p) { p[threadIdx.x] *= 2; }\n' >"$work/inputs.cu"
"$nvcc" -cubin -arch=sm_90 "$work/inputs.cu" -o "$work/machine_code.cubin"
"$nvcc" -fatbin -Xfatbin -compress=false -gencode arch=compute_90,code=compute_90 "$work/inputs.cu" -o "$work/ptx_only.fatbin"
echo "ARGS machine_code.cubin ptx_only.fatbin"
