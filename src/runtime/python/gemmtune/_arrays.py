"""The caller's arrays and streams as the runtime takes them, and outputs allocated through the caller's framework.

An operand is read in place (gemmtune.read_array: __cuda_array_interface__ or __dlpack__) and must be float32 and
compact in one of the two layouts a GEMM reads without a copy: row-major, or a transposed view of a row-major array
(``W.t()`` in PyTorch, a Fortran-ordered CuPy array), which the problem's trans flags absorb. Anything else is an
error that names the argument: gemmtune never copies an input behind the caller's back.
"""
import sys
from dataclasses import dataclass

from . import _gemmtune
from ._gemmtune import InputError

# Stream handles as the array protocols write them.
LEGACY_STREAM = 1
PER_THREAD_STREAM = 2


@dataclass(frozen=True)
class Matrix:
    """A 2-D float32 operand: rows x cols as the caller sees it; `transposed`: stored column by column (the
    transpose of a row-major cols x rows array)."""

    name: str
    view: _gemmtune.ArrayView
    rows: int
    cols: int
    transposed: bool

    @property
    def ptr(self):
        return self.view.ptr

    def layout(self):
        return "transposed" if self.transposed else "row-major"


@dataclass(frozen=True)
class Vector:
    """A float32 vector (a bias or its gradient): length n, shape (n,) or (1, n), compact."""

    name: str
    view: _gemmtune.ArrayView
    length: int

    @property
    def ptr(self):
        return self.view.ptr


def _type_name(obj):
    return type(obj).__module__ + "." + type(obj).__qualname__


def framework(obj):
    """The imported module (torch or cupy) whose array `obj` is, or None."""
    top = type(obj).__module__.partition(".")[0]
    return sys.modules.get(top) if top in ("torch", "cupy") else None


def stream_handle(stream, like):
    """The CUDA stream handle (an int) that `stream` names: an int handle (0: the legacy default stream), or an
    object with `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream). None: the current stream of the
    framework `like` belongs to (torch.cuda.current_stream(), cupy.cuda.get_current_stream()), else 0."""
    if stream is None:
        fw = framework(like)
        if fw is not None and fw.__name__ == "torch":
            return fw.cuda.current_stream(like.device).cuda_stream
        if fw is not None and fw.__name__ == "cupy":
            return fw.cuda.get_current_stream().ptr
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream: a stream handle or stream object is needed, not a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise InputError(f"stream: {stream} is not a stream handle")
        return stream
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int) and not isinstance(handle, bool):
            return handle
    raise TypeError(f"stream: an int handle or a stream with .cuda_stream (PyTorch) or .ptr (CuPy) is needed, "
                    f"not {_type_name(stream)}")


def same_stream(a, b):
    """Whether two handles name one stream (0 and 1 both name the legacy default stream)."""
    def normal(s):
        return LEGACY_STREAM if s == 0 else s
    return normal(a) == normal(b)


def dlpack_stream(stream):
    """The stream argument __dlpack__ takes for work on `stream` (where 0 is ambiguous, so the legacy stream is 1)."""
    return LEGACY_STREAM if stream == 0 else stream


def read(obj, name, stream, element="float32"):
    if obj is None:
        raise TypeError(f"{name}: a CUDA device array is needed, not None")
    return _gemmtune.read_array(obj, name, element, dlpack_stream(stream))


def matrix(obj, name, stream):
    """`obj` as a Matrix; raises TypeError/InputError naming `name` where it is not a compact 2-D float32 array in
    either layout."""
    view = read(obj, name, stream)
    if len(view.shape) != 2:
        raise InputError(f"{name}: a 2-D array is needed; this one has shape {tuple(view.shape)}")
    rows, cols = view.shape
    if rows < 1 or cols < 1:
        raise InputError(f"{name}: the array is empty (shape {rows}x{cols})")
    s_row, s_col = view.strides
    # A dimension of extent 1 has no stride that matters: frameworks write any value there.
    if (cols == 1 or s_col == 1) and (rows == 1 or s_row == cols):
        transposed = False
    elif (rows == 1 or s_row == 1) and (cols == 1 or s_col == rows):
        transposed = True
    else:
        raise InputError(f"{name}: a {rows}x{cols} array with strides ({s_row}, {s_col}) elements is neither "
                         f"row-major ({cols}, 1) nor a transposed view (1, {rows}); gemmtune reads arrays in place "
                         f"and never copies them, so pass a contiguous array (or a transposed view of one)")
    if view.ptr == 0:
        raise InputError(f"{name}: the array's data pointer is null")
    return Matrix(name, view, rows, cols, transposed)


def vector(obj, name, stream):
    """`obj` as a Vector: shape (n,) or (1, n), compact."""
    view = read(obj, name, stream)
    shape, strides = tuple(view.shape), tuple(view.strides)
    if len(shape) == 1 and (shape[0] == 1 or strides[0] == 1):
        length = shape[0]
    elif len(shape) == 2 and shape[0] == 1 and (shape[1] == 1 or strides[1] == 1):
        length = shape[1]
    else:
        raise InputError(f"{name}: a compact vector of shape (n,) or (1, n) is needed; this one has shape {shape} "
                         f"and strides {strides} (elements)")
    if length < 1:
        raise InputError(f"{name}: the vector is empty")
    if view.ptr == 0:
        raise InputError(f"{name}: the array's data pointer is null")
    return Vector(name, view, length)


def counter(obj, name, stream):
    """The device address of a dropout counter: a one-element uint64/int64 device array, or an int address."""
    if isinstance(obj, int) and not isinstance(obj, bool):
        if obj <= 0:
            raise InputError(f"{name}: {obj} is not a device address")
        return obj, None
    view = read(obj, name, stream, element="counter")
    size = 1
    for extent in view.shape:
        size *= extent
    if size != 1:
        raise InputError(f"{name}: a one-element counter is needed; this array has shape {tuple(view.shape)}")
    if view.ptr == 0:
        raise InputError(f"{name}: the array's data pointer is null")
    return view.ptr, view


def check_device(view, name, device):
    """Raises InputError where the array says it is on another GPU than `device`."""
    if view.device is not None and view.device != device:
        raise InputError(f"{name}: the array is on cuda:{view.device}, the runtime on cuda:{device}")


def _torch_empty(torch, like, shape, transposed):
    if transposed:
        return torch.empty(shape[::-1], dtype=torch.float32, device=like.device).t()
    return torch.empty(shape, dtype=torch.float32, device=like.device)


def empty(like, shape, transposed, name):
    """A new float32 array of `shape` (rows, cols) or (n,), of the framework `like` belongs to, on its device, stored
    transposed where asked; and its device address."""
    fw = framework(like)
    if fw is not None and fw.__name__ == "torch":
        out = _torch_empty(fw, like, shape, transposed)
        return out, out.data_ptr()
    if fw is not None and fw.__name__ == "cupy":
        with fw.cuda.Device(like.device.id):
            out = fw.empty(shape, dtype=fw.float32, order="F" if transposed else "C")
        return out, out.data.ptr
    raise TypeError(f"{name}: gemmtune allocates outputs as PyTorch tensors or CuPy arrays only; for "
                    f"{_type_name(like)} inputs pass {name}= an array to write")
