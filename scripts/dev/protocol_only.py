"""A tensor's memory behind one array protocol alone, as another framework's array shows it: what the Python call
benchmarks (scripts/bench_python_overhead.py, scripts/dev/python_call_breakdown.py) hand gemmtune to time the
__cuda_array_interface__ and __dlpack__ paths on the same memory as the tensors' own."""


class InterfaceOnly:
    """__cuda_array_interface__ alone, as a CuPy or Numba array shows it (the tensor's dict, read once)."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class DlpackOnly:
    """__dlpack__ alone, as a JAX or another framework's array shows it."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, **kwargs):
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()
