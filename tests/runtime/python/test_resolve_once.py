"""The reader of Runtime.forward's resolved-call path for arrays that are not PyTorch tensors (issue 48), no GPU:
what its key keeps apart, what it hands back to the full path, and the pointers, devices and streams a call must look
at again. The path's calls through a Runtime are in test_gpu_runtime.py."""
import unittest

from gemmtune import _gemmtune
from fakes import FakeCudaArray, FakeDlpackArray, RefusingArray, row_major, transposed

LEGACY = 1


def read(*arrays, stream=LEGACY):
    return _gemmtune.read_call_arrays(arrays, stream)


def key(*arrays):
    r = read(*arrays)
    return None if r is None else r.key


class InterfaceKeyTest(unittest.TestCase):
    def test_the_same_shapes_and_strides_share_a_key_whatever_the_pointers(self):
        first = read(row_major(64, 32, ptr=0x1000), row_major(32, 16), row_major(64, 16))
        second = read(row_major(64, 32, ptr=0x2000), row_major(32, 16, ptr=0x3000), row_major(64, 16, ptr=0x4000))
        self.assertIsNotNone(first)
        self.assertEqual(first.key, second.key)
        hash(first.key)
        self.assertEqual(second.pointers, [0x2000, 0x3000, 0x4000])
        self.assertEqual(second.devices, [-1, -1, -1], "an interface does not say its GPU: the call asks CUDA")

    def test_a_layout_shape_read_only_flag_or_fourth_array_is_another_key(self):
        base = key(row_major(64, 32), row_major(32, 16), row_major(64, 16))
        others = [key(transposed(64, 32), row_major(32, 16), row_major(64, 16)),
                  key(row_major(64, 32), row_major(32, 17), row_major(64, 17)),
                  key(row_major(64, 32), row_major(32, 16), row_major(64, 16, read_only=True)),
                  key(row_major(64, 32), row_major(32, 16), row_major(64, 16), FakeCudaArray((16,)))]
        for other in others:
            self.assertIsNotNone(other)
            self.assertNotEqual(base, other)

    def test_compact_strides_written_out_key_as_none_does(self):
        self.assertEqual(key(FakeCudaArray((64, 32), strides=(32, 1)), row_major(32, 16), row_major(64, 16)),
                         key(row_major(64, 32), row_major(32, 16), row_major(64, 16)))

    def test_a_list_shape_keys_as_its_tuple_does(self):
        listed = FakeCudaArray((64, 32))
        listed.interface["shape"] = [64, 32]
        self.assertEqual(key(listed, row_major(32, 16), row_major(64, 16)),
                         key(row_major(64, 32), row_major(32, 16), row_major(64, 16)))

    def test_what_the_full_path_must_judge_reads_as_nothing_and_leaves_no_error_set(self):
        missing = FakeCudaArray((64, 32))
        del missing.interface["typestr"]
        odd_stride = FakeCudaArray((64, 32), strides=(32, 1))
        odd_stride.interface["strides"] = (130, 4)
        judged = [row_major(64, 32, ptr=0), row_major(64, 32, mask=object()), row_major(64, 32, stream=0),
                  row_major(64, 32, typestr="<f8", itemsize=8), row_major(64, 32, version=4), missing, odd_stride,
                  RefusingArray(), object()]
        for bad in judged:
            self.assertIsNone(read(bad, row_major(32, 16), row_major(64, 16)), repr(getattr(bad, "interface", bad)))

    def test_only_version_3_interfaces_name_a_stream_to_order_after(self):
        r = read(row_major(4, 4, stream=0x77), row_major(4, 4, stream=None), row_major(4, 4, version=2))
        self.assertEqual(r.producer_streams, [0x77])


class DlpackKeyTest(unittest.TestCase):
    def test_a_capsule_is_read_with_the_call_stream_and_released(self):
        arrays = [FakeDlpackArray((64, 32), ptr=0x1000, byte_offset=64), FakeDlpackArray((32, 16), device=(2, 1)),
                  FakeDlpackArray((64, 16), strides=(16, 1), device=(13, 0))]
        r = read(*arrays, stream=0x55)
        self.assertEqual(r.pointers[0], 0x1040)
        self.assertEqual(r.devices, [0, 1, 0], "DLPack names the GPU (CUDA or managed memory)")
        self.assertEqual([a.streams for a in arrays], [[0x55]] * 3)
        self.assertEqual([a.deleted for a in arrays], [1, 1, 1], "each capsule's deleter ran: nothing kept")
        self.assertEqual(r.producer_streams, [])

    def test_dlpack_and_interface_arrays_of_one_layout_key_apart_and_strides_none_keys_as_compact(self):
        compact = key(FakeDlpackArray((64, 32)), FakeDlpackArray((32, 16)), FakeDlpackArray((64, 16)))
        written = key(FakeDlpackArray((64, 32), strides=(32, 1)), FakeDlpackArray((32, 16)),
                      FakeDlpackArray((64, 16)))
        self.assertEqual(compact, written)
        self.assertNotEqual(compact, key(row_major(64, 32), FakeDlpackArray((32, 16)), FakeDlpackArray((64, 16))))

    def test_host_memory_other_types_and_null_pointers_read_as_nothing(self):
        for bad in (FakeDlpackArray((4, 4), device=(1, 0)), FakeDlpackArray((4, 4), dtype=(2, 64, 1)),
                    FakeDlpackArray((4, 4), ptr=0)):
            self.assertIsNone(read(bad, FakeDlpackArray((4, 4)), FakeDlpackArray((4, 4))))


if __name__ == "__main__":
    unittest.main()
