"""Reading device arrays through __cuda_array_interface__ and __dlpack__ (gemmtune.read_array and the operand checks
of gemmtune/_arrays.py), with stand-ins that need no GPU."""
import gc
import unittest

import gemmtune
from gemmtune import _arrays
from fakes import FAKE_ADDRESS, FakeCudaArray, FakeDlpackArray, RefusingArray, row_major, transposed


class CudaArrayInterfaceTest(unittest.TestCase):
    def test_row_major_array_is_read_in_place(self):
        v = gemmtune.read_array(row_major(3, 5), "A")
        self.assertEqual((v.ptr, v.shape, v.strides, v.device, v.stream), (FAKE_ADDRESS, (3, 5), (5, 1), 0, None))
        self.assertEqual(v.protocol, "__cuda_array_interface__")

    def test_strides_in_bytes_become_elements(self):
        v = gemmtune.read_array(transposed(3, 5), "A")
        self.assertEqual(v.strides, (1, 3))

    def test_version_2_without_stream_and_version_3_stream_are_read(self):
        self.assertIsNone(gemmtune.read_array(row_major(2, 2, version=2), "A").stream)
        self.assertEqual(gemmtune.read_array(row_major(2, 2, stream=0x1234), "A").stream, 0x1234)

    def test_stream_zero_is_refused_as_the_protocol_says(self):
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*stream 0"):
            gemmtune.read_array(row_major(2, 2, stream=0), "A")

    def test_wrong_element_type_raises_type_error_naming_the_argument(self):
        with self.assertRaisesRegex(TypeError, "^B: .*'<f8'.*float32"):
            gemmtune.read_array(row_major(2, 2, typestr="<f8", itemsize=8), "B")
        with self.assertRaisesRegex(TypeError, "^A: .*'<f2'"):
            gemmtune.read_array(row_major(2, 2, typestr="<f2", itemsize=2), "A")

    def test_counter_takes_64_bit_integers_only(self):
        self.assertEqual(gemmtune.read_array(FakeCudaArray((1,), typestr="<i8", itemsize=8), "c", "counter").shape,
                         (1,))
        with self.assertRaisesRegex(TypeError, "^offset_ptr: .*uint64 or int64"):
            gemmtune.read_array(FakeCudaArray((1,)), "offset_ptr", "counter")

    def test_mask_and_partial_element_strides_and_unknown_versions_are_refused(self):
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*mask"):
            gemmtune.read_array(row_major(2, 2, mask=object()), "A")
        bad = row_major(2, 2)
        bad.interface["strides"] = (8, 2)
        with self.assertRaisesRegex(gemmtune.InputError, "^A: a stride of 2 bytes"):
            gemmtune.read_array(bad, "A")
        with self.assertRaisesRegex(TypeError, "^A: .*version 4"):
            gemmtune.read_array(row_major(2, 2, version=4), "A")

    def test_host_memory_is_refused_where_the_array_says_so(self):
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*host memory"):
            gemmtune.read_array(row_major(2, 2, dlpack_device=(1, 0)), "A")

    def test_an_array_that_does_not_say_its_device_reads_as_unknown(self):
        self.assertIsNone(gemmtune.read_array(row_major(2, 2, dlpack_device=None), "A").device)

    def test_object_without_a_protocol_raises_type_error(self):
        for obj in (object(), [[1.0, 2.0]], 3.0):
            with self.subTest(obj=obj), self.assertRaisesRegex(TypeError, "^A: a CUDA device array is needed"):
                gemmtune.read_array(obj, "A")
        with self.assertRaisesRegex(TypeError, "^A: .*not None"):
            _arrays.matrix(None, "A", 0)

    def test_a_getter_that_raises_becomes_type_error_naming_the_argument(self):
        with self.assertRaisesRegex(TypeError, "^bias: reading its __cuda_array_interface__ failed: .*requires grad"):
            gemmtune.read_array(RefusingArray(), "bias")


class DlpackTest(unittest.TestCase):
    def test_capsule_is_read_in_place_and_released(self):
        a = FakeDlpackArray((4, 6), strides=(1, 4), device=(2, 1), byte_offset=64)
        v = gemmtune.read_array(a, "A", dlpack_stream=0x55)
        self.assertEqual((v.ptr, v.shape, v.strides, v.device), (FAKE_ADDRESS + 64, (4, 6), (1, 4), 1))
        self.assertEqual(v.protocol, "__dlpack__")
        self.assertEqual(a.streams, [0x55])
        gc.collect()
        self.assertEqual(a.deleted, 1, "the capsule must be released, not consumed and leaked")

    def test_capsule_without_strides_is_compact_row_major(self):
        self.assertEqual(gemmtune.read_array(FakeDlpackArray((4, 6)), "A").strides, (6, 1))

    def test_managed_memory_is_a_device_array(self):
        self.assertEqual(gemmtune.read_array(FakeDlpackArray((2, 2), device=(13, 0)), "A").device, 0)

    def test_wrong_dtype_host_memory_and_other_devices_are_refused(self):
        with self.assertRaisesRegex(TypeError, "^A: .*64 bits.*float32"):
            gemmtune.read_array(FakeDlpackArray((2, 2), dtype=(2, 64, 1)), "A")
        with self.assertRaisesRegex(TypeError, "^A: .*2 lanes"):
            gemmtune.read_array(FakeDlpackArray((2, 2), dtype=(2, 32, 2)), "A")
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*host memory"):
            gemmtune.read_array(FakeDlpackArray((2, 2), device=(1, 0)), "A")
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*DLPack type 10"):
            gemmtune.read_array(FakeDlpackArray((2, 2), device=(10, 0)), "A")


class OperandTest(unittest.TestCase):
    def test_row_major_and_transposed_views_are_told_apart(self):
        self.assertFalse(_arrays.matrix(row_major(3, 5), "A", 0).transposed)
        self.assertTrue(_arrays.matrix(transposed(3, 5), "A", 0).transposed)

    def test_extent_one_dimensions_accept_any_stride(self):
        self.assertFalse(_arrays.matrix(FakeCudaArray((1, 5), strides=(99, 1)), "A", 0).transposed)
        self.assertFalse(_arrays.matrix(FakeCudaArray((5, 1), strides=(1, 99)), "A", 0).transposed)
        self.assertEqual(_arrays.vector(FakeCudaArray((1, 7), strides=(0, 1)), "bias", 0).length, 7)

    def test_other_stride_patterns_are_an_error_never_a_copy(self):
        every_other_column = FakeCudaArray((4, 3), strides=(6, 2))
        with self.assertRaisesRegex(gemmtune.InputError, r"^B: a 4x3 array with strides \(6, 2\).*never copies"):
            _arrays.matrix(every_other_column, "B", 0)
        padded_rows = FakeCudaArray((4, 3), strides=(8, 1))
        with self.assertRaisesRegex(gemmtune.InputError, "^A: "):
            _arrays.matrix(padded_rows, "A", 0)
        with self.assertRaisesRegex(gemmtune.InputError, "^bias: a compact vector"):
            _arrays.vector(FakeCudaArray((6,), strides=(2,)), "bias", 0)

    def test_rank_and_empty_arrays_are_refused(self):
        with self.assertRaisesRegex(gemmtune.InputError, r"^A: a 2-D array is needed; .*\(2, 3, 4\)"):
            _arrays.matrix(FakeCudaArray((2, 3, 4)), "A", 0)
        with self.assertRaisesRegex(gemmtune.InputError, "^A: the array is empty"):
            _arrays.matrix(FakeCudaArray((0, 3)), "A", 0)
        with self.assertRaisesRegex(gemmtune.InputError, "^A: .*null"):
            _arrays.matrix(row_major(2, 2, ptr=0), "A", 0)

    def test_counter_is_an_address_or_a_one_element_array(self):
        self.assertEqual(_arrays.counter(0x1000, "offset_ptr", 0), (0x1000, None))
        with self.assertRaisesRegex(gemmtune.InputError, "^offset_ptr: .*one-element"):
            _arrays.counter(FakeCudaArray((2,), typestr="<u8", itemsize=8), "offset_ptr", 0)
        with self.assertRaisesRegex(gemmtune.InputError, "^offset_ptr: -4"):
            _arrays.counter(-4, "offset_ptr", 0)

    def test_outputs_of_unknown_frameworks_must_be_given(self):
        with self.assertRaisesRegex(TypeError, "^out: .*pass out="):
            _arrays.empty(row_major(2, 2), (2, 2), False, "out")


class StreamTest(unittest.TestCase):
    class TorchLikeStream:
        cuda_stream = 0xABC

    class CupyLikeStream:
        ptr = 0xDEF

    def test_stream_handles_and_stream_objects(self):
        self.assertEqual(_arrays.stream_handle(0x77, None), 0x77)
        self.assertEqual(_arrays.stream_handle(self.TorchLikeStream(), None), 0xABC)
        self.assertEqual(_arrays.stream_handle(self.CupyLikeStream(), None), 0xDEF)
        self.assertEqual(_arrays.stream_handle(None, row_major(2, 2)), 0, "no framework: the default stream")

    def test_bad_streams_raise_naming_stream(self):
        for bad, error in ((True, TypeError), ("s", TypeError), (object(), TypeError), (-1, gemmtune.InputError)):
            with self.subTest(stream=bad), self.assertRaisesRegex(error, "^stream: "):
                _arrays.stream_handle(bad, None)

    def test_default_streams_compare_equal_and_dlpack_gets_one_for_the_legacy_stream(self):
        self.assertTrue(_arrays.same_stream(0, 1))
        self.assertFalse(_arrays.same_stream(0, 2))
        self.assertEqual(_arrays.dlpack_stream(0), 1)
        self.assertEqual(_arrays.dlpack_stream(0x99), 0x99)


if __name__ == "__main__":
    unittest.main()
