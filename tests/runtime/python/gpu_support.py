"""What the GPU tests share: the skip (printed, and read by ctest as Skipped), fp64 references of every activation,
and the project's tolerances (relative Frobenius error: tf32 1e-3, fp32 and 3xtf32 1e-6·√k)."""
import math
import os
import tempfile
import unittest

ACTIVATIONS = ("none", "relu", "leaky_relu", "gelu", "gelu_erf", "sigmoid", "tanh")
LEAKY_SLOPE = 0.01


def require_gpu_and_torch():
    """Raises unittest.SkipTest("gemmtune test skipped: ...") where this machine has no usable GPU or no CUDA
    PyTorch; returns the torch module otherwise."""
    import gemmtune
    with tempfile.TemporaryDirectory() as tmp:
        try:
            gemmtune.Runtime(os.path.join(tmp, "probe.db"))
        except gemmtune.NoGpuError as e:
            raise unittest.SkipTest(f"gemmtune test skipped: no usable GPU ({e})")
    try:
        import torch
    except ImportError:
        raise unittest.SkipTest("gemmtune test skipped: the GPU tests need PyTorch")
    if not torch.cuda.is_available():
        raise unittest.SkipTest("gemmtune test skipped: this PyTorch has no CUDA")
    return torch


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
