"""gemmtune: the tuned fused GEMM runtime on CuPy, PyTorch and any CUDA array (docs/python.md).

    import cupy as cp, gemmtune
    rt = gemmtune.Runtime()                   # the default db: gemmtune.default_db()
    A = cp.random.random((1000, 1024), dtype=cp.float32)
    B = cp.random.random((1024, 4096), dtype=cp.float32)
    Y = rt.forward(A, B, act="gelu")          # gelu(A·B), asynchronous on CuPy's current stream

gemmtune.torch (imported on its own, where PyTorch is installed) has FusedLinear, an nn.Module on this runtime.
"""
from ._gemmtune import (ArrayView, CheckError, Error, InputError, NoGpuError, Problem, __version__,
                        read_array)
from .runtime import (ACTIVATIONS, MODES, BackwardCall, ForwardCall, Runtime, default_db, plan_backward,
                      plan_forward)
from .tuning import sweep_misses

__all__ = ["ACTIVATIONS", "MODES", "ArrayView", "BackwardCall", "CheckError", "Error", "ForwardCall", "InputError",
           "NoGpuError", "Problem", "Runtime", "__version__", "default_db", "plan_backward", "plan_forward",
           "read_array", "sweep_misses"]
