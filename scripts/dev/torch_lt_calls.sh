#!/usr/bin/env bash
# What PyTorch eager asks of cuBLASLt for addmm + gelu and mm, on the GPU machine: cuBLASLt's own API log
# (CUBLASLT_LOG_LEVEL=5) of one call each, fp32 and tf32, per shape; the lines that name the workspace, the preferences
# the heuristic is asked with and the algo that runs (lt/no_entry_candidates.hpp: eager_call copies that call).
#   usage: scripts/dev/torch_lt_calls.sh OUT_DIR "M N K" ["M N K" ...]
set -uo pipefail
out=${1:?usage: scripts/dev/torch_lt_calls.sh OUT_DIR "M N K" ...}
shift
(($#)) || { echo 'usage: scripts/dev/torch_lt_calls.sh OUT_DIR "M N K" ["M N K" ...]' >&2; exit 2; }
mkdir -p "$out"
for shape in "$@"; do
  read -r m n k <<<"$shape"
  for mode in fp32 tf32; do
    log=$out/lt_${m}x${n}x${k}_$mode.log
    CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE=$log python3 - "$m" "$n" "$k" "$mode" <<'PY'
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
    # The heuristic's questions and the calls, addmm's (cublasLt*) then mm's through cuBLAS (cublasLtSSS*), without
    # timestamps and pointers.
    echo "## lt_${m}x${n}x${k}_$mode"
    grep -E '\[Api\]\[cublasLt(SSS)?MatmulAlgoGetHeuristic\]|\[(Api|Trace)\]\[cublasLt(SSS)?Matmul\]' "$log" |
      sed -E 's/^\[[^]]*\]\[cublasLt\]\[[0-9]+\]//; s/ (A|B|C|D|workSpace)=0X[0-9A-F]+//g;
              s/biasPointer=0x[0-9a-f]+/biasPointer=.../; s/(computeDesc|algo|Adesc|Bdesc|Cdesc|Ddesc)=0X[0-9A-F]+//g;
              s/stream=0X[0-9A-F]+//'
  done
done
