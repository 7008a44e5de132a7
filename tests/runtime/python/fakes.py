"""Stand-ins for device arrays that need no GPU: objects that expose __cuda_array_interface__ as a framework would,
and DLPack capsules built with ctypes on the struct layout of dlpack.h (so the binding's own declaration is checked
against an independent one). The addresses are never dereferenced: only the runtime's launches would, and these
tests never launch."""
import ctypes

FAKE_ADDRESS = 0x7F00_0000_0000


class FakeCudaArray:
    """__cuda_array_interface__ of a (rows, cols) array; strides in elements (None: compact row-major), as CuPy and
    Numba write it. dlpack_device: what __dlpack_device__() returns, or None for an object without it."""

    def __init__(self, shape, strides=None, typestr="<f4", itemsize=4, ptr=FAKE_ADDRESS, version=3, stream=None,
                 dlpack_device=(2, 0), read_only=False, mask=None):
        self.interface = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, read_only), "version": version,
                          "strides": None if strides is None else tuple(s * itemsize for s in strides)}
        if version >= 3:
            self.interface["stream"] = stream
        if mask is not None:
            self.interface["mask"] = mask
        self._dlpack_device = dlpack_device

    @property
    def __cuda_array_interface__(self):
        return self.interface

    def __getattr__(self, name):
        if name == "__dlpack_device__" and self._dlpack_device is not None:
            return lambda: self._dlpack_device
        raise AttributeError(name)


def row_major(rows, cols, **kwargs):
    return FakeCudaArray((rows, cols), **kwargs)


def transposed(rows, cols, **kwargs):
    """A rows x cols view of a row-major cols x rows array (what W.t() or a Fortran-ordered array is)."""
    return FakeCudaArray((rows, cols), strides=(1, rows), **kwargs)


class RefusingArray:
    """What PyTorch does for a tensor that requires grad: the protocol getter raises."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")


# dlpack.h, written out again here on purpose.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

# Function objects of their own (pythonapi[...] makes a new one), so other users of ctypes.pythonapi are unaffected.
# The destructor takes the dying capsule as a plain address: a py_object argument would revive it.
_capsule_new = ctypes.pythonapi["PyCapsule_New"]
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_valid = ctypes.pythonapi["PyCapsule_IsValid"]
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_get = ctypes.pythonapi["PyCapsule_GetPointer"]
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class FakeDlpackArray:
    """An object whose __dlpack__() returns a real "dltensor" capsule of a fake device array. `deleted` counts the
    DLManagedTensor deleter's calls, which an unconsumed capsule's destructor makes; `streams` records what the
    consumer passed as stream=."""

    def __init__(self, shape, strides=None, device=(2, 0), dtype=(2, 32, 1), ptr=FAKE_ADDRESS, byte_offset=0):
        self.shape, self.strides, self.device, self.dtype = shape, strides, device, dtype
        self.ptr, self.byte_offset = ptr, byte_offset
        self.deleted = 0
        self.streams = []
        self._keep = []  # the ctypes objects a capsule points into, alive as long as this object

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * ndim)(*self.shape)
        strides = (ctypes.c_int64 * ndim)(*self.strides) if self.strides is not None else None
        managed = DLManagedTensor()
        t = managed.dl_tensor
        t.data = self.ptr
        t.device = DLDevice(*self.device)
        t.ndim = ndim
        t.dtype = DLDataType(*self.dtype)
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        t.byte_offset = self.byte_offset

        def deleter(_):
            self.deleted += 1

        managed.deleter = DELETER(deleter)

        def destructor(capsule):
            # As producers do: an unconsumed capsule ("dltensor") runs the tensor's deleter when it dies.
            if _capsule_valid(capsule, b"dltensor"):
                managed_ptr = ctypes.cast(_capsule_get(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
                managed_ptr.contents.deleter(managed_ptr)

        on_death = CAPSULE_DESTRUCTOR(destructor)
        self._keep += [shape, strides, managed, on_death]
        return _capsule_new(ctypes.addressof(managed), b"dltensor", ctypes.cast(on_death, ctypes.c_void_p))
