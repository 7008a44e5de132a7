#!/usr/bin/env bash
# What PyTorch eager asks of cuBLASLt and cuBLAS for addmm + gelu and mm, on the GPU machine: cuBLASLt's and cuBLAS's
# own API logs (CUBLASLT_LOG_LEVEL=5, CUBLAS_LOGINFO_DBG) of one call each, fp32 and tf32, per shape; the lines that
# name the workspace, the preferences the heuristic is asked with and the algo that runs
# (lt/no_entry_candidates.hpp: eager_call copies that call).
#   usage: scripts/dev/torch_lt_calls.sh OUT_DIR "M N K" ["M N K" ...]
set -uo pipefail
out=${1:?usage: scripts/dev/torch_lt_calls.sh OUT_DIR "M N K" ...}
shift
mkdir -p "$out"
for shape in "$@"; do
  read -r m n k <<<"$shape"
  for mode in fp32 tf32; do
    log=$out/lt_${m}x${n}x${k}_$mode.log
    CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE=$log CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG=$out/blas_${m}x${n}x${k}_$mode.log \
      python3 - "$m" "$n" "$k" "$mode" <<'PY'
import sys
import torch
m, n, k = (int(v) for v in sys.argv[1:4])
torch.backends.cuda.matmul.allow_tf32 = sys.argv[4] == "tf32"
a = torch.randn(m, k, device="cuda")
b = torch.randn(k, n, device="cuda")
bias = torch.randn(n, device="cuda")
torch.nn.functional.gelu(torch.addmm(bias, a, b), approximate="tanh")
torch.mm(a, b)
torch.cuda.synchronize()
print(torch.__version__, torch.version.cuda)
PY
    echo "== ${m}x${n}x${k} $mode"
    grep -oE 'cublasLtMatmulAlgoGetHeuristic|MAX_WORKSPACE_BYTES[^,]*|workspaceSizeInBytes=[0-9]+|ALIGNMENT[A-Z_]*[^,]*|algo=\[[^]]*\]|cublasLtMatmul\(' "$log" 2>/dev/null | sort | uniq -c | head -20
    grep -oE 'cublas[A-Za-z]*Gemm[A-Za-z_0-9]*' "$out/blas_${m}x${n}x${k}_$mode.log" 2>/dev/null | sort | uniq -c | head -5
  done
done
