"""What the GPU tests share: when they run, skip or fail (as the C++ tests' GT_REQUIRE_GPU decides), fp64 references of
every activation, an independent Philox4x32-10 for dropout masks, and the project's tolerances (relative Frobenius
error: tf32 1e-3, fp32 and 3xtf32 1e-6·√k)."""
import ctypes
import math
import os
import struct
import tempfile
import unittest

ACTIVATIONS = ("none", "relu", "leaky_relu", "gelu", "gelu_erf", "sigmoid", "tanh")
LEAKY_SLOPE = 0.01
# What CUDA says where it sees no device at all: cudaErrorNoDevice's text, and gemmtune's for a count of 0.
NO_DEVICE_ERRORS = ("no CUDA-capable device is detected", "no CUDA devices found")


class GpuTestCannotRun(Exception):
    """A GPU test that must fail rather than skip: a GPU is there that CUDA cannot use, or GEMMTUNE_REQUIRE_GPU is
    set."""


def gpu_test_skips_fail():
    """GEMMTUNE_REQUIRE_GPU set to anything but 0 (the GPU machine's runs, a GPU CI job): a GPU test that would skip
    fails instead, as in the C++ tests (tests/support/gpu_test.hpp)."""
    return os.environ.get("GEMMTUNE_REQUIRE_GPU", "0") not in ("", "0")


def skip_gpu_tests(reason):
    """Raises unittest.SkipTest("gemmtune test skipped: <reason>"), which run_test_file.py reports to ctest as
    Skipped; under GEMMTUNE_REQUIRE_GPU a GpuTestCannotRun instead."""
    if gpu_test_skips_fail():
        raise GpuTestCannotRun(f"GEMMTUNE_REQUIRE_GPU is set, so this GPU test fails where it would skip: {reason}")
    raise unittest.SkipTest(f"gemmtune test skipped: {reason}")


def nvidia_driver_evidence():
    """/dev/nvidiactl or /dev/nvidia0, or a libcuda.so.1 that loads: a GPU is installed here, whatever CUDA says. The
    same evidence as src/cuda/device_info.cpp's probe_cuda_devices, which the C++ tests decide by."""
    found = [node for node in ("/dev/nvidiactl", "/dev/nvidia0") if os.path.exists(node)]
    try:
        ctypes.CDLL("libcuda.so.1")
        found.append("libcuda.so.1 loads")
    except OSError:
        pass
    return found


def require_gpu_and_torch():
    """Returns the torch module where this machine has a usable GPU and a CUDA PyTorch. Skips the file's tests
    (skip_gpu_tests) where it has no GPU or no such PyTorch; fails them where a GPU is there that CUDA cannot use,
    naming the reason."""
    import gemmtune
    with tempfile.TemporaryDirectory() as tmp:
        try:
            gemmtune.Runtime(os.path.join(tmp, "probe.db"))
        except gemmtune.NoGpuError as e:
            evidence = nvidia_driver_evidence()
            if evidence and not any(text in str(e) for text in NO_DEVICE_ERRORS):
                raise GpuTestCannotRun(f"this GPU test cannot run: {e} (this machine has {', '.join(evidence)})")
            skip_gpu_tests(f"no usable GPU ({e})")
    try:
        import torch
    except ImportError:
        skip_gpu_tests("the GPU tests need PyTorch")
    if not torch.cuda.is_available():
        skip_gpu_tests("this PyTorch has no CUDA")
    return torch


def philox4x32_10(counter, key):
    """Philox4x32-10 (Salmon et al., SC'11, with Random123's constants and round order) of four 32-bit counter words
    and two key words, written here from the paper rather than taken from kernels/epilogue.cuh, so that a mask the
    kernels draw is checked against a generator of its own (test_philox_reference.py checks this one)."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF, (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def dropout_keep_mask(seed, offset, rows, cols, p):
    """The dropout mask of a rows x cols output as rows lists of bools, by the contract of docs/python.md: element
    (r, c) is kept where Philox's first word, keyed by the 64-bit seed, at counter (64-bit index r·cols + c, 64-bit
    offset), gives a uniform (word >> 8)·2^-24 ≥ p, p as the fp32 the problem holds."""
    p32 = struct.unpack("f", struct.pack("f", p))[0]
    key = (seed & 0xFFFFFFFF, seed >> 32)
    offset_words = (offset & 0xFFFFFFFF, offset >> 32)
    mask = []
    for r in range(rows):
        row = []
        for c in range(cols):
            element = r * cols + c
            word = philox4x32_10((element & 0xFFFFFFFF, element >> 32) + offset_words, key)[0]
            row.append((word >> 8) / 16777216.0 >= p32)
        mask.append(row)
    return mask


def reference_activation(torch, act):
    F = torch.nn.functional
    return {"none": lambda z: z, "relu": F.relu, "leaky_relu": lambda z: F.leaky_relu(z, LEAKY_SLOPE),
            "gelu": lambda z: F.gelu(z, approximate="tanh"), "gelu_erf": F.gelu, "sigmoid": torch.sigmoid,
            "tanh": torch.tanh}[act]


def tolerance(mode, *dims):
    return 1e-3 if mode == "tf32" else 1e-6 * math.sqrt(max(dims))


def relative_error(got, ref):
    ref = ref.double()
    return float((got.double() - ref).norm() / ref.norm())


def grad_of_z_reference(torch, act, z, grad_y, keep=None, p=0.0):
    """gZ = gY ⊙ act'(Z) (⊙ keep/(1−p)) in fp64, at the forward's own pre-activation Z. The backward is checked at the
    Z it was given, not at an fp64 Z recomputed from the inputs: where a tf32 Z lies on the other side of relu's kink
    (or on a steep part of tanh) from the fp64 one, act' differs there by design, an error the forward's check of Z
    already bounds."""
    z64 = z.detach().double().reshape(grad_y.shape).requires_grad_()
    y = reference_activation(torch, act)(z64)
    if keep is not None:
        y = y * keep.double().reshape(grad_y.shape) / (1 - p)
    y.backward(grad_y.double())
    return z64.grad


class GpuTestCase(unittest.TestCase):
    def assert_close(self, got, ref, mode, dims, what):
        error, bound = relative_error(got, ref), tolerance(mode, *dims)
        self.assertLessEqual(error, bound, f"{what}: relative Frobenius error {error:.3g} > {bound:.3g} ({mode})")


class RuntimeTestCase(GpuTestCase):
    """A GpuTestCase with a Runtime of its own (cls.rt) on a db named DB_NAME in a temporary directory."""
    DB_NAME = "runtime.db"

    @classmethod
    def setUpClass(cls):
        import gemmtune
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rt = gemmtune.Runtime(os.path.join(cls.tmp.name, cls.DB_NAME))

    @classmethod
    def tearDownClass(cls):
        # Written while the directory exists: a layer or autograd graph still holding the Runtime would otherwise
        # have it try at exit, into a removed directory.
        cls.rt.flush()
        del cls.rt
        cls.tmp.cleanup()
