"""gemmtune.torch: FusedLinear, a torch.nn.Module whose forward and backward run through gemmtune's tuned runtime.

    import torch, gemmtune.torch
    layer = gemmtune.torch.FusedLinear(1024, 4096, activation="gelu", dropout=0.1).cuda()
    y = layer(torch.randn(8, 1000, 1024, device="cuda"))   # dropout(gelu(x·Wᵀ + b)), one fused kernel
    y.sum().backward()                                       # gZ and gBias in one pass, then gX and gW

Y = dropout(act(X·Wᵀ + b)) for X [..., in] (leading dimensions flattened into rows by a view, never a copy). The
weight is PyTorch's [out, in], read transposed by the GEMM (the problem's trans_b), so FusedLinear's state_dict is an
nn.Linear's. Calls run on torch.cuda.current_stream() and can be captured by torch.cuda.graph once each shape has run
eagerly (that first call resolves the problem: allocation, and a first-use trial where the db has no entry).
Dropout masks come from a counter in device memory that every forward reads and advances (Runtime.advance_offset),
so each eager step and each graph replay draws a new mask, and the backward regenerates its forward's.

Activation names are gemmtune's: "gelu" is the tanh form (nn.GELU(approximate="tanh")), "gelu_erf" the exact one
(nn.GELU()); also none, relu, leaky_relu (leaky_slope), sigmoid, tanh.
"""
import math

import torch
from torch import nn

from . import runtime as _runtime
from ._gemmtune import InputError, Problem
from ._gemmtune import Runtime as _BoundRuntime

_default_runtimes = {}


def _device_index(device):
    device = torch.device(device if device is not None else "cuda")
    if device.type != "cuda":
        raise InputError(f"device: gemmtune runs on CUDA devices, not {device}")
    return device.index if device.index is not None else torch.cuda.current_device()


def default_runtime(device=None):
    """The Runtime that FusedLinear layers on `device` use when given none: gemmtune.Runtime(device=index), made at
    its first use, on the default db (gemmtune.default_db()). set_default_runtime() puts another in its place."""
    index = _device_index(device)
    if index not in _default_runtimes:
        _default_runtimes[index] = _runtime.Runtime(device=index)
    return _default_runtimes[index]


def set_default_runtime(rt):
    """Makes `rt` the Runtime of FusedLinear layers on its device that were given none."""
    if not isinstance(rt, _runtime.Runtime):
        raise TypeError(f"rt: a gemmtune.Runtime is needed, not {type(rt).__name__}")
    _default_runtimes[rt.device] = rt


def _stored_transposed(rows, cols, strides, name):
    """Whether a rows x cols tensor of these strides is stored column by column (a transposed view); InputError where
    it is neither that nor row-major, since the runtime reads it in place."""
    s_row, s_col = strides
    if (cols == 1 or s_col == 1) and (rows == 1 or s_row == cols):
        return False
    if (rows == 1 or s_row == 1) and (cols == 1 or s_col == rows):
        return True
    raise InputError(f"{name}: a {rows}x{cols} tensor with strides ({s_row}, {s_col}) is neither row-major nor a "
                     f"transposed view; gemmtune reads tensors in place, so pass a contiguous one")


def _empty(rows, cols, transposed, like):
    """A new rows x cols float32 tensor on like's device, stored as `transposed` says (new_empty: no device object)."""
    return like.new_empty((cols, rows)).t() if transposed else like.new_empty((rows, cols))


def _address(t):
    return t.data_ptr() if t is not None else 0


# The current stream's handle, asked for at every call: torch.cuda.current_stream() builds a Stream object each time
# (microseconds a layer, which an eager step of small layers feels); the raw getter Inductor's kernels use does not.
_raw_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(device_index):
    if _raw_current_stream is not None:
        return _raw_current_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


class _LayerCall:
    """What a layer's call of one input shape and layout resolves to, kept so a repeated call skips the checks and
    the Problem's construction: an eager step of small layers is bound by the host's time per call. The sizes and
    layouts are copied out of the Problem because each of its attributes is a call into the extension."""

    __slots__ = ("problem", "runtime", "device", "m", "n", "k", "trans_a", "trans_b")

    def __init__(self, problem, runtime, device):
        self.problem, self.runtime, self.device = problem, runtime, device
        self.m, self.n, self.k = problem.m, problem.n, problem.k
        self.trans_a, self.trans_b = problem.trans_a, problem.trans_b


class _FusedLinearFunction(torch.autograd.Function):
    """Y = dropout(act(X·Wᵀ + b)) forward and backward through the layer's Runtime; Z is kept only where the backward
    needs it (an activation and a gradient to compute)."""

    @staticmethod
    def forward(ctx, x, weight, bias, layer, p):
        save_z = layer.activation != "none" and any(ctx.needs_input_grad[:3])
        call = layer._call(x, weight, bias, save_z, p)
        stream = _current_stream(call.device)
        y = x.new_empty((call.m, call.n))
        z = x.new_empty((call.m, call.n)) if save_z else None
        offset = layer._draw_offset(stream) if p > 0 else None
        call.runtime._rt.forward(call.problem, x.data_ptr(), weight.data_ptr(), _address(bias), y.data_ptr(),
                                 _address(z), layer.seed, 0, _address(offset), stream)
        ctx.save_for_backward(x, weight, z, offset)
        ctx.call, ctx.seed = call, layer.seed
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, weight, z, offset = ctx.saved_tensors
        need_x, need_w, need_bias = ctx.needs_input_grad[:3]
        c = ctx.call
        # The runtime reads gY as Y is stored (row-major); autograd may hand a broadcast one (y.sum()'s gradient).
        grad_y = grad_y.contiguous()
        gx = _empty(c.m, c.k, c.trans_a, x) if need_x else None
        gw = _empty(c.n, c.k, not c.trans_b, weight) if need_w else None
        gb = x.new_empty((c.n,)) if need_bias else None
        c.runtime._rt.backward(c.problem, x.data_ptr(), weight.data_ptr(), _address(z), grad_y.data_ptr(),
                               _address(gx), _address(gw), _address(gb), ctx.seed, 0, _address(offset),
                               _current_stream(c.device))
        return gx, gw, gb, None, None


class FusedLinear(nn.Module):
    """nn.Linear + activation + dropout as one fused GEMM forward and one fused backward on gemmtune's runtime.

    in_features, out_features, bias: as nn.Linear (same initialization, same parameter names and shapes).
    activation: none, relu, leaky_relu, gelu (tanh form), gelu_erf, sigmoid, tanh. dropout: probability p, applied in
    training mode only. mode: tf32, fp32 or 3xtf32. runtime: the gemmtune.Runtime to run on (None: default_runtime()
    of the input's device)."""

    def __init__(self, in_features, out_features, bias=True, activation="gelu", dropout=0.0, mode="tf32",
                 runtime=None, *, leaky_slope=0.01, device=None, dtype=None):
        super().__init__()
        for value, name in ((in_features, "in_features"), (out_features, "out_features")):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name}: an int is needed, not {type(value).__name__}")
            if value < 1:
                raise InputError(f"{name}: {value} is not a positive size")
        _runtime._check_choice(activation, "activation", _runtime.ACTIVATIONS)
        _runtime._check_probability(dropout, "dropout")
        _runtime._check_choice(mode, "mode", _runtime.MODES)
        _runtime._check_real(leaky_slope, "leaky_slope")
        if runtime is not None and not isinstance(runtime, _runtime.Runtime):
            raise TypeError(f"runtime: a gemmtune.Runtime is needed, not {type(runtime).__name__}")
        if dtype is not None and dtype != torch.float32:
            raise TypeError(f"dtype: FusedLinear computes in float32, not {dtype}")
        self.in_features, self.out_features = in_features, out_features
        self.activation, self.dropout, self.mode, self.leaky_slope = activation, float(dropout), mode, leaky_slope
        self.runtime = runtime
        self.weight = nn.Parameter(torch.empty((out_features, in_features), dtype=torch.float32, device=device))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features, dtype=torch.float32, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        # The dropout key, from PyTorch's generator (after the weights, so they match an nn.Linear's under the same
        # torch.manual_seed); the counter is this layer's, advanced by every forward, kept out of the state_dict.
        self.seed = int(torch.randint(0, 1 << 62, (1,)).item())
        self.register_buffer("dropout_offset", torch.zeros(1, dtype=torch.int64, device=device), persistent=False)
        self._calls = {}

    def reset_parameters(self):
        """nn.Linear's initialization."""
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features)
            nn.init.uniform_(self.bias, -bound, bound)

    @classmethod
    def from_linear(cls, linear, activation="gelu", dropout=0.0, mode="tf32", runtime=None, *, leaky_slope=0.01):
        """A FusedLinear that shares `linear`'s weight and bias Parameters (no copy), followed by `activation` and
        `dropout`: what `nn.Sequential(linear, <activation>, nn.Dropout(dropout))` computes."""
        if not isinstance(linear, nn.Linear):
            raise TypeError(f"linear: a torch.nn.Linear is needed, not {type(linear).__name__}")
        if linear.weight.dtype != torch.float32:
            raise TypeError(f"linear: its weight is {linear.weight.dtype}; FusedLinear computes in float32")
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, activation=activation,
                    dropout=dropout, mode=mode, runtime=runtime, leaky_slope=leaky_slope, device="meta")
        layer.weight = linear.weight
        if linear.bias is not None:
            layer.bias = linear.bias
        layer.dropout_offset = torch.zeros(1, dtype=torch.int64, device=linear.weight.device)
        return layer.train(linear.training)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"activation={self.activation}, dropout={self.dropout}, mode={self.mode}")

    def forward(self, input):
        if not isinstance(input, torch.Tensor):
            raise TypeError(f"input: a torch.Tensor is needed, not {type(input).__name__}")
        if input.dtype != torch.float32:
            raise TypeError(f"input: FusedLinear computes in float32; input is {input.dtype}")
        if not input.is_cuda:
            raise InputError(f"input: FusedLinear runs on CUDA tensors; input is on {input.device}")
        if input.dim() == 0 or input.shape[-1] != self.in_features:
            raise InputError(f"input: its last dimension must be in_features={self.in_features}; its shape is "
                             f"{tuple(input.shape)}")
        weight = self.weight
        if weight.get_device() != input.get_device():
            raise InputError(f"input: it is on {input.device}, the layer's weight on {weight.device}")
        x = input
        if input.dim() != 2:
            try:
                x = input.view(-1, self.in_features)
            except RuntimeError:
                raise InputError(f"input: its leading dimensions (shape {tuple(input.shape)}, strides "
                                 f"{input.stride()}) cannot be flattened into rows without a copy; pass a contiguous "
                                 f"tensor") from None
            if x.shape[0] == 0:
                raise InputError(f"input: it has no rows (shape {tuple(input.shape)})")
        p = self.dropout if self.training else 0.0
        y = _FusedLinearFunction.apply(x, weight, self.bias, self, p)
        return y if input.dim() == 2 else y.view(*input.shape[:-1], self.out_features)

    def _runtime_for(self, device_index):
        rt = self.runtime
        if rt is None:
            rt = _default_runtimes.get(device_index)
        if rt is None:
            rt = default_runtime(torch.device("cuda", device_index))
        return rt

    def _call(self, x, weight, bias, save_z, p):
        """The resolved call for x (2-D, CUDA, float32: forward() checked) with this weight and bias; the parameters
        and layouts are checked and the Problem made once per shape, layout, dtype and runtime."""
        device = x.get_device()
        rt = self._runtime_for(device)
        key = (x.shape[0], x.stride(), weight.shape, weight.stride(), weight.dtype,
               None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.get_device()), save_z, p, device)
        call = self._calls.get(key)
        if call is not None and call.runtime is rt:
            return call
        if rt.device != device:
            raise InputError(f"runtime: it runs cuda:{rt.device}, the input is on cuda:{device}")
        shape = (self.out_features, self.in_features)
        for t, name, want in ((weight, "weight", shape), (bias, "bias", shape[:1])):
            if t is None:
                continue
            if t.dtype != torch.float32:
                raise TypeError(f"{name}: FusedLinear computes in float32; {name} is {t.dtype}")
            if tuple(t.shape) != want:
                raise InputError(f"{name}: its shape is {tuple(t.shape)}, not {want}")
            if t.get_device() != device:
                raise InputError(f"{name}: it is on {t.device}, the input on cuda:{device}")
        m = x.shape[0]
        trans_a = _stored_transposed(m, self.in_features, key[1], "input")
        # [out, in] row-major is B = Wᵀ stored transposed
        trans_b = not _stored_transposed(self.out_features, self.in_features, key[3], "weight")
        if bias is not None and bias.stride() != (1,) and self.out_features > 1:
            raise InputError(f"bias: its stride is {bias.stride()[0]}; gemmtune reads it in place, so pass a "
                             f"contiguous one")
        problem = Problem(m, self.out_features, self.in_features, trans_a=trans_a, trans_b=trans_b,
                          bias=bias is not None, act=self.activation, leaky_slope=self.leaky_slope, save_z=save_z,
                          dropout=p, mode=self.mode)
        call = _LayerCall(problem, rt, device)
        self._calls[key] = call
        return call

    def _draw_offset(self, stream):
        """This call's dropout offset: a copy of the layer's counter (read by the forward and by its backward), then
        the counter advanced by one, both on the device, so a captured graph draws a new mask at every replay."""
        offset = self.dropout_offset.clone()
        _BoundRuntime.advance_offset(self.dropout_offset.data_ptr(), 1, stream, self.dropout_offset.device.index)
        return offset
