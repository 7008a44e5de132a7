"""gemmtune.Runtime: the tuned fused GEMM runtime over any CUDA arrays (CuPy, PyTorch, Numba, DLPack producers).

    rt = gemmtune.Runtime("gemmtune.db")
    Y, Z = rt.forward(A, B, bias, act="gelu", save_z=True)        # Y = gelu(A·B + bias), Z kept for the backward
    gA, gB, gBias = rt.backward(A, B, gY, z=Z, bias=True, act="gelu")

The problem each call runs is read off its arrays: A is m x k, B is k x n (either may be a transposed view, which sets
the problem's trans flags), Y is m x n (out= may be a transposed view: Y stored n x m). plan_forward() and
plan_backward() are the same checks without a Runtime or a GPU: what a call would run, or the error it would raise.
"""
import atexit
import math
import os
import sys
import weakref
from dataclasses import dataclass
from typing import Optional

from . import _arrays, _gemmtune
from ._gemmtune import InputError, Problem

ACTIVATIONS = ("none", "relu", "leaky_relu", "gelu", "gelu_erf", "sigmoid", "tanh")
MODES = ("fp32", "tf32", "3xtf32")
_UINT64_LIMIT = 1 << 64


def default_db():
    """The db a Runtime, gemmtune.torch's default runtime and sweep_misses use when given none, the CLI's default too:
    $GEMMTUNE_DB, else $XDG_CACHE_HOME/gemmtune/gemmtune.db, else ~/.cache/gemmtune/gemmtune.db, whatever the working
    directory (`gemmtune paths` prints it). Its directories are created by the first flush() that has misses to write;
    where it cannot be written, flush() raises gemmtune.InputError naming the variable that placed it."""
    return _gemmtune.default_db()


def _check_choice(value, name, choices):
    if not isinstance(value, str):
        raise TypeError(f"{name}: a string is needed (one of {', '.join(choices)}), not {type(value).__name__}")
    if value not in choices:
        raise InputError(f"{name}: '{value}' is not one of {', '.join(choices)}")


def _check_real(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: a number is needed, not {type(value).__name__}")
    if not math.isfinite(value):
        raise InputError(f"{name}: {value} is not finite")


def _check_probability(value, name):
    _check_real(value, name)
    if not 0.0 <= value < 1.0:
        raise InputError(f"{name}: {value} is not a probability in [0, 1)")


def _check_word(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: an int is needed, not {type(value).__name__}")
    if not 0 <= value < _UINT64_LIMIT:
        raise InputError(f"{name}: {value} does not fit an unsigned 64-bit word")


@dataclass(frozen=True)
class ForwardCall:
    """What Runtime.forward runs: the problem, the operands read in place, and the outputs given (None: allocated)."""

    problem: Problem
    stream: int
    A: _arrays.Matrix
    B: _arrays.Matrix
    bias: Optional[_arrays.Vector]
    out: Optional[_arrays.Matrix]
    z: Optional[_arrays.Matrix]
    offset_ptr: int  # 0: the offset by value

    def operands(self):
        return [x for x in (self.A, self.B, self.bias, self.out, self.z) if x is not None]


@dataclass(frozen=True)
class BackwardCall:
    """What Runtime.backward runs. `problem` is the forward's; a grad_* of None is allocated, False is not computed."""

    problem: Problem
    stream: int
    A: _arrays.Matrix
    B: _arrays.Matrix
    grad_out: _arrays.Matrix
    z: Optional[_arrays.Matrix]
    grad_a: object   # a Matrix to write, None to allocate, False to skip
    grad_b: object
    grad_bias: object
    offset_ptr: int

    def operands(self):
        given = (self.A, self.B, self.grad_out, self.z, self.grad_a, self.grad_b, self.grad_bias)
        return [x for x in given if x is not None and x is not False]


def _check_operands(operands, device, counter_view):
    for x in operands:
        _arrays.check_device(x.view, x.name, device)
    if counter_view is not None:
        _arrays.check_device(counter_view, "offset_ptr", device)


def _dropout_state(dropout, seed, offset, offset_ptr, stream):
    _check_probability(dropout, "dropout")
    _check_word(seed, "seed")
    _check_word(offset, "offset")
    if offset_ptr is None:
        return 0, None
    return _arrays.counter(offset_ptr, "offset_ptr", stream)


def _output(obj, name, stream, rows, cols, what):
    """An output array given by the caller, checked to be rows x cols and writable."""
    if obj is None:
        return None
    m = _arrays.matrix(obj, name, stream)
    if (m.rows, m.cols) != (rows, cols):
        raise InputError(f"{name}: shape {m.rows}x{m.cols} does not match {what} ({rows}x{cols})")
    if m.view.read_only:
        raise InputError(f"{name}: the array is read-only")
    return m


def _product_operands(A, B, stream):
    """The stream handle and the matrices A (m x k) and B (k x n) of a forward's product, read as its arguments."""
    s = _arrays.stream_handle(stream, A)
    a = _arrays.matrix(A, "A", s)
    b = _arrays.matrix(B, "B", s)
    if b.rows != a.cols:
        raise InputError(f"B: its {b.rows} rows do not match A's {a.cols} columns (A is {a.rows}x{a.cols}, "
                         f"B {b.rows}x{b.cols})")
    return s, a, b


def plan_forward(A, B, bias=None, *, act="none", leaky_slope=0.01, out=None, z=None, save_z=False, dropout=0.0,
                 seed=0, offset=0, offset_ptr=None, mode="tf32", stream=None, device=0):
    """The problem and operands Runtime(device=device).forward would run with these arguments, or the TypeError /
    gemmtune.InputError it would raise, naming the argument. Needs no GPU and no Runtime."""
    s, a, b = _product_operands(A, B, stream)
    m, k, n = a.rows, a.cols, b.cols
    v = None if bias is None else _arrays.vector(bias, "bias", s)
    if v is not None and v.length != n:
        raise InputError(f"bias: its length {v.length} does not match B's {n} columns")
    _check_choice(act, "act", ACTIVATIONS)
    _check_real(leaky_slope, "leaky_slope")
    _check_choice(mode, "mode", MODES)
    if not isinstance(save_z, bool):
        raise TypeError(f"save_z: a bool is needed, not {type(save_z).__name__}")
    counter_ptr, counter_view = _dropout_state(dropout, seed, offset, offset_ptr, s)
    y = _output(out, "out", s, m, n, "A·B, m x n")
    zm = _output(z, "z", s, m, n, "A·B, m x n")
    if y is not None and zm is not None and y.transposed != zm.transposed:
        raise InputError(f"z: it is stored {zm.layout()} but out {y.layout()}; Z is stored as Y is")
    layout = y if y is not None else zm
    problem = Problem(m, n, k, trans_a=a.transposed, trans_b=b.transposed,
                      out="col" if layout is not None and layout.transposed else "row", bias=v is not None, act=act,
                      leaky_slope=leaky_slope, save_z=save_z or zm is not None, dropout=dropout, mode=mode)
    call = ForwardCall(problem, s, a, b, v, y, zm, counter_ptr)
    _check_operands(call.operands(), device, counter_view)
    return call


def _gradient(obj, name, stream, like):
    """A gradient output: False (not computed), None (allocated) or an array in `like`'s shape and layout."""
    if obj is None or obj is False:
        return obj
    g = _arrays.matrix(obj, name, stream)
    if (g.rows, g.cols) != (like.rows, like.cols) or g.transposed != like.transposed:
        raise InputError(f"{name}: a {g.rows}x{g.cols} {g.layout()} array does not match {like.name} "
                         f"({like.rows}x{like.cols}, {like.layout()}); a gradient is stored as its input is")
    if g.view.read_only:
        raise InputError(f"{name}: the array is read-only")
    return g


def plan_backward(A, B, grad_out, *, z=None, bias=None, act="none", leaky_slope=0.01, dropout=0.0, seed=0, offset=0,
                  offset_ptr=None, mode="tf32", grad_a=None, grad_b=None, grad_bias=None, stream=None, device=0):
    """What Runtime(device=device).backward would run, or the error it would raise. Needs no GPU and no Runtime."""
    s, a, b = _product_operands(A, B, stream)
    m, k, n = a.rows, a.cols, b.cols
    gy = _arrays.matrix(grad_out, "grad_out", s)
    if (gy.rows, gy.cols) != (m, n):
        raise InputError(f"grad_out: shape {gy.rows}x{gy.cols} does not match the forward's Y ({m}x{n})")
    _check_choice(act, "act", ACTIVATIONS)
    _check_real(leaky_slope, "leaky_slope")
    _check_choice(mode, "mode", MODES)
    has_bias = bias is not None and bias is not False
    counter_ptr, counter_view = _dropout_state(dropout, seed, offset, offset_ptr, s)
    zm = None
    if act != "none":
        if z is None:
            raise InputError(f"z: the backward of act='{act}' needs the forward's Z (forward(..., save_z=True))")
        zm = _arrays.matrix(z, "z", s)
        if (zm.rows, zm.cols) != (m, n) or zm.transposed != gy.transposed:
            raise InputError(f"z: a {zm.rows}x{zm.cols} {zm.layout()} array does not match grad_out "
                             f"({m}x{n}, {gy.layout()}); Z is stored as Y is")
    ga = _gradient(grad_a, "grad_a", s, a)
    gb = _gradient(grad_b, "grad_b", s, b)
    if grad_bias is not None and grad_bias is not False and not has_bias:
        raise InputError("grad_bias: given, but the forward had no bias (pass bias=True or the bias array)")
    gbias = grad_bias if grad_bias is None or grad_bias is False else _arrays.vector(grad_bias, "grad_bias", s)
    if isinstance(gbias, _arrays.Vector) and gbias.length != n:
        raise InputError(f"grad_bias: its length {gbias.length} does not match B's {n} columns")
    if not has_bias:
        gbias = False
    problem = Problem(m, n, k, trans_a=a.transposed, trans_b=b.transposed, out="col" if gy.transposed else "row",
                      bias=has_bias, act=act, leaky_slope=leaky_slope, save_z=act != "none", dropout=dropout,
                      mode=mode)
    call = BackwardCall(problem, s, a, b, gy, zm, ga, gb, gbias, counter_ptr)
    _check_operands(call.operands(), device, counter_view)
    return call


def _check_seed_and_offset(seed, offset):
    """What plan_forward checks of seed and offset, for the resolved-call paths: the checks' calls only where one will
    raise (each costs the host ~0.1 us)."""
    if type(seed) is not int or type(offset) is not int or seed | offset < 0 or (seed | offset) >> 64:
        _check_word(seed, "seed")
        _check_word(offset, "offset")


def _torch_raw_stream(torch):
    """device index -> the handle of PyTorch's current stream there: torch.cuda.current_stream() builds a Stream object
    at every call, the raw handle is what a launch needs."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda index: torch.cuda.current_stream(index).cuda_stream)


# Runtimes alive in this interpreter: their misses are written at exit even where a Runtime outlives the interpreter's
# orderly teardown (a reference cycle, a module global), so `gemmtune sweep --from-misses` sees every one.
_live = weakref.WeakSet()


@atexit.register
def _flush_at_exit():
    for rt in list(_live):
        try:
            rt.flush()
        except _gemmtune.Error as e:
            print(f"gemmtune: warning: could not record the cache misses: {e}", file=sys.stderr)
            rt._rt.silence_warnings()  # once said: its destructor would try again and say it twice


class Runtime:
    """The tuned runtime of one GPU (gemmtune/runtime.hpp): each call runs the fastest verified candidate the db has
    for its problem, else a nearby tuned shape's or cuBLASLt's heuristic default, and remembers the problems that had
    no entry (written by flush(), at exit, or when the Runtime is collected) for `gemmtune sweep --from-misses`.

    db: the algo cache (None: default_db(), the CLI's default); a missing file is not an error. device: the
    CUDA device index. The keywords are gemmtune::RuntimeOptions (None: the runtime's default). Raises
    gemmtune.NoGpuError where there is no usable GPU, gemmtune.InputError for a damaged db or a bad option.

    Calls are asynchronous on `stream` (None: the current stream of the arrays' framework), release the GIL, and
    never synchronize or touch the db once their problem was seen (or prepared), so they can be captured in a CUDA
    graph. One Runtime is correct on any stream and from any thread: each stream and each graph capture has scratch
    of its own, allocated at its first call (see runtime.hpp)."""

    def __init__(self, db=None, device=0, *, fp32_equivalent=False, workspace_bytes=None, workspace=None,
                 max_nearest_distance=None, min_transfer_margin=None, min_agreeing_neighbours=None,
                 confirm_standins=None, max_trial_candidates=None, concurrent_backward=None,
                 replay_repeated_calls=None):
        if db is None:
            db = default_db()
        if not isinstance(db, (str, os.PathLike)):
            raise TypeError(f"db: a path is needed, not {type(db).__name__}")
        db = os.fspath(db)
        if isinstance(device, bool) or not isinstance(device, int):
            raise TypeError(f"device: a CUDA device index (int) is needed, not {type(device).__name__}")
        options = {"workspace_bytes": workspace_bytes, "workspace": workspace,
                   "max_nearest_distance": max_nearest_distance, "min_transfer_margin": min_transfer_margin,
                   "min_agreeing_neighbours": min_agreeing_neighbours, "confirm_standins": confirm_standins,
                   "max_trial_candidates": max_trial_candidates, "concurrent_backward": concurrent_backward,
                   "replay_repeated_calls": replay_repeated_calls}
        given = {key: value for key, value in options.items() if value is not None}
        self.db = db
        self._rt = _gemmtune.Runtime(db, device, fp32_equivalent=bool(fp32_equivalent), **given)
        self._torch_forwards = {}
        self._raw_stream = None  # _torch_raw_stream's, taken at the first PyTorch call
        self._protocol_forwards = {}
        _live.add(self)

    def __repr__(self):
        return (f"gemmtune.Runtime(db={self.db!r}, device={self.device}: {self.cache_size} cache entries for "
                f"{self.device_key!r})")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.flush()

    @property
    def device(self):
        return self._rt.device

    @property
    def device_key(self):
        """This GPU's key in the db (GPU, SMs, driver, cuBLASLt version): only entries with this key are used."""
        return self._rt.device_key

    @property
    def cache_size(self):
        """How many cache entries of this GPU the db had."""
        return self._rt.cache_size

    @property
    def call_graphs(self):
        """(graphs, replays): the forward calls that repeated exactly and were captured as CUDA graphs, and how many
        calls ran as their replays (RuntimeOptions::replay_repeated_calls, on unless replay_repeated_calls=False)."""
        return self._rt.call_graphs

    def _prepare_operands(self, call):
        """Device checks the arrays could not answer themselves, and the producers' streams waited for."""
        producers = set()
        for x in call.operands():
            if x.view.device is None:
                where = self._rt.device_of(x.ptr)
                if where < 0:
                    raise InputError(f"{x.name}: the address is not CUDA device memory")
                if where != self.device:
                    raise InputError(f"{x.name}: the array is on cuda:{where}, the runtime on cuda:{self.device}")
            if x.view.stream is not None and not _arrays.same_stream(x.view.stream, call.stream):
                producers.add(x.view.stream)
        for producer in producers:
            self._rt.order_after(producer, call.stream)

    def forward(self, A, B, bias=None, *, act="none", leaky_slope=0.01, out=None, z=None, save_z=False, dropout=0.0,
                seed=0, offset=0, offset_ptr=None, mode="tf32", stream=None):
        """Y = dropout(act(A·B + bias)), written into `out` (None: a new array of A's framework).

        A: m x k, B: k x n, bias: (n,) or None; each row-major or a transposed view. act: none, relu, leaky_relu
        (leaky_slope), gelu (tanh form), gelu_erf, sigmoid, tanh. save_z (or z= given): also write the pre-activation
        Z = A·B + bias, stored as Y is, which the backward of an activation needs. dropout: probability p; the mask is
        Philox(seed, offset, row·n + col), so the backward with the same seed and offset regenerates it; offset_ptr
        (a one-element uint64/int64 device array) instead reads the offset on the device when the call runs (CUDA
        graphs: see advance_offset). mode: tf32, fp32 or 3xtf32. Returns Y, or (Y, Z) where Z is saved."""
        if stream is None and z is None and offset_ptr is None and save_z is False:
            y = self._torch_forward(A, B, bias, out, act, leaky_slope, dropout, seed, offset, mode)
            if y is None:
                y = self._protocol_forward(A, B, bias, out, act, leaky_slope, dropout, seed, offset, mode)
            if y is not None:
                return y
        call = plan_forward(A, B, bias, act=act, leaky_slope=leaky_slope, out=out, z=z, save_z=save_z,
                            dropout=dropout, seed=seed, offset=offset, offset_ptr=offset_ptr, mode=mode, stream=stream,
                            device=self.device)
        self._prepare_operands(call)
        p = call.problem
        transposed = p.out == "col"
        y, y_ptr = (out, call.out.ptr) if call.out is not None else _arrays.empty(A, (p.m, p.n), transposed, "out")
        zv, z_ptr = None, 0
        if p.save_z:
            zv, z_ptr = (z, call.z.ptr) if call.z is not None else _arrays.empty(A, (p.m, p.n), transposed, "z")
        self._rt.forward(p, call.A.ptr, call.B.ptr, call.bias.ptr if call.bias is not None else 0, y_ptr, z_ptr,
                         seed, offset, call.offset_ptr, call.stream)
        return (y, zv) if p.save_z else y

    # What a resolved PyTorch or array-interface forward keeps: at most this many combinations, then checked afresh.
    _RESOLVED_FORWARDS_KEPT = 4096

    def _resolve_forward(self, kept, key, A, B, bias, out, act, leaky_slope, dropout, seed, offset, mode):
        """A combination the fast paths have not seen: plan_forward's checks, the devices and producer streams, and its
        problem kept under `key` in `kept` (emptied first where it is full). Returns the checked call."""
        call = plan_forward(A, B, bias, act=act, leaky_slope=leaky_slope, out=out, dropout=dropout, seed=seed,
                            offset=offset, mode=mode, device=self.device)
        self._prepare_operands(call)
        if len(kept) >= self._RESOLVED_FORWARDS_KEPT:
            kept.clear()
        kept[key] = call.problem
        return call

    def _torch_forward(self, A, B, bias, out, act, leaky_slope, dropout, seed, offset, mode):
        """forward() of PyTorch tensors, out= given, on their device's current stream, with plan_forward's checks made
        once per combination of what they check (the tensors' shapes, strides, dtypes and devices, and the arguments,
        with their types) rather than at every call: then a call reads four pointers and the stream, as FusedLinear
        does, and costs the host about what torch.mm does (issue 48). None where this path does not apply (another
        kind of array, a tensor that requires grad, which the full path refuses), and the full path runs."""
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        tensor = torch.Tensor
        if type(A) is not tensor or type(B) is not tensor or type(out) is not tensor:
            return None
        if bias is not None and type(bias) is not tensor:
            return None
        if A.requires_grad or B.requires_grad or (bias is not None and bias.requires_grad):
            return None
        # get_device(): the device's index as an int (-1 on the host), where .device builds a torch.device per call.
        key = (A.shape, A.stride(), A.dtype, A.get_device(), B.shape, B.stride(), B.dtype, B.get_device(), out.shape,
               out.stride(), out.dtype, out.get_device(),
               None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.get_device()),
               act, type(leaky_slope), leaky_slope, type(dropout), dropout, mode)
        problem = self._torch_forwards.get(key)
        if problem is None:
            problem = self._resolve_forward(self._torch_forwards, key, A, B, bias, out, act, leaky_slope, dropout,
                                            seed, offset, mode).problem
        else:
            _check_seed_and_offset(seed, offset)
        if self._raw_stream is None:
            self._raw_stream = _torch_raw_stream(torch)
        self._rt.forward(problem, A.data_ptr(), B.data_ptr(), 0 if bias is None else bias.data_ptr(), out.data_ptr(), 0,
                         seed, offset, 0, self._raw_stream(key[3]))
        return out

    def _protocol_forward(self, A, B, bias, out, act, leaky_slope, dropout, seed, offset, mode):
        """forward() of arrays read through __cuda_array_interface__ (CuPy, Numba, a framework's wrapper) or
        __dlpack__ (JAX, any DLPack producer), out= given, on the current stream, as _torch_forward does it: the
        binding reads the arrays at once (read_call_arrays: a key of their shapes, strides and read-only flags, and
        their pointers), plan_forward's checks are made once per key and the arguments, and then a call checks each
        pointer's GPU and orders itself after the streams the interfaces name, as the full path does at every call
        (forward_read). None where this path does not apply, and the full path runs (and raises what it finds)."""
        if out is None:
            return None
        stream = _arrays.stream_handle(None, A)
        read = _gemmtune.read_call_arrays((A, B, out) if bias is None else (A, B, out, bias),
                                          _arrays.dlpack_stream(stream))
        if read is None:
            return None
        key = (read.key, act, type(leaky_slope), leaky_slope, type(dropout), dropout, mode)
        problem = self._protocol_forwards.get(key)
        if problem is None:
            call = self._resolve_forward(self._protocol_forwards, key, A, B, bias, out, act, leaky_slope, dropout,
                                         seed, offset, mode)
            self._rt.forward(call.problem, call.A.ptr, call.B.ptr, call.bias.ptr if call.bias is not None else 0,
                             call.out.ptr, 0, seed, offset, 0, call.stream)
            return out
        _check_seed_and_offset(seed, offset)
        return out if self._rt.forward_read(problem, read, seed, offset, stream) else None

    def backward(self, A, B, grad_out, *, z=None, bias=None, act="none", leaky_slope=0.01, dropout=0.0, seed=0,
                 offset=0, offset_ptr=None, mode="tf32", grad_a=None, grad_b=None, grad_bias=None, stream=None):
        """The backward of forward(A, B, bias, act=..., dropout=..., seed=..., offset=..., mode=...) given grad_out
        (dL/dY, stored as Y was): one pass computes gZ = grad_out * act'(Z) * mask/(1-p) and reduces grad_bias, then
        grad_a = gZ·Bᵀ and grad_b = Aᵀ·gZ run as tuned GEMMs.

        z: the forward's Z (needed unless act is none). bias: the forward's bias array, or True/False: whether it
        had one. grad_a, grad_b, grad_bias: arrays to write (stored as A, B and the bias are), None to allocate, False
        to skip. Returns (grad_a, grad_b, grad_bias), None for what was not computed."""
        call = plan_backward(A, B, grad_out, z=z, bias=bias, act=act, leaky_slope=leaky_slope, dropout=dropout,
                             seed=seed, offset=offset, offset_ptr=offset_ptr, mode=mode, grad_a=grad_a, grad_b=grad_b,
                             grad_bias=grad_bias, stream=stream, device=self.device)
        self._prepare_operands(call)
        p = call.problem

        def output(given, array, like, shape, transposed, name):
            if given is False:
                return None, 0
            if given is not None:
                return array, given.ptr
            return _arrays.empty(like, shape, transposed, name)

        ga, ga_ptr = output(call.grad_a, grad_a, A, (p.m, p.k), call.A.transposed, "grad_a")
        gb, gb_ptr = output(call.grad_b, grad_b, B, (p.k, p.n), call.B.transposed, "grad_b")
        gbias, gbias_ptr = output(call.grad_bias, grad_bias, A, (p.n,), False, "grad_bias")
        self._rt.backward(p, call.A.ptr, call.B.ptr, call.z.ptr if call.z is not None else 0, call.grad_out.ptr,
                          ga_ptr, gb_ptr, gbias_ptr, seed, offset, call.offset_ptr, call.stream)
        return ga, gb, gbias

    def _problem(self, A, B, bias, kwargs):
        if isinstance(A, Problem):
            if B is not None or bias is not None or kwargs:
                raise TypeError("a Problem stands alone: pass no arrays or keywords with it")
            return A
        if isinstance(A, str):
            return Problem.parse(A)
        return plan_forward(A, B, bias, device=self.device, **kwargs).problem

    def prepare(self, A, B=None, bias=None, *, backward=False, **kwargs):
        """Resolves a problem ahead of its first call (allocation, algo build, a first-use trial), e.g. before
        capturing a CUDA graph. Takes a gemmtune.Problem, a problem key, or the forward's arguments; backward=True
        also prepares its backward (both GEMMs and the gZ pass)."""
        problem = self._problem(A, B, bias, kwargs)
        self._rt.prepare(problem, False)
        if backward:
            self._rt.prepare(problem, True)

    def prepared(self, A, B=None, bias=None, **kwargs):
        """Whether a problem (as prepare takes it) is resolved, so its calls are capturable."""
        return self._rt.prepared(self._problem(A, B, bias, kwargs))

    def explain(self, A, B=None, bias=None, *, backward=False, **kwargs):
        """Which candidate a problem (as prepare takes it) runs and why; backward=True: its backward's pass and two
        GEMMs, one line each. Resolves the problem if it was not yet."""
        return self._rt.explain(self._problem(A, B, bias, kwargs), bool(backward))

    def flush(self):
        """Writes the misses recorded so far to the db (creating the file); raises gemmtune.InputError if it cannot."""
        self._rt.flush()

    @staticmethod
    def advance_offset(counter, n=1, stream=None):
        """Adds n to the dropout counter `counter` (a one-element uint64/int64 device array, or its address) as one
        kernel on `stream`: no allocation and no synchronization, so a CUDA graph captures it. Capture it at the end
        of a step whose calls take offset_ptr=counter: every replay then draws a new dropout mask."""
        _check_word(n, "n")
        s = _arrays.stream_handle(stream, counter)
        address, view = _arrays.counter(counter, "counter", s)
        device = -1 if view is None or view.device is None else view.device
        _gemmtune.Runtime.advance_offset(address, n, s, device)
