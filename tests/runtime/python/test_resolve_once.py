"""The array-interface fast path of Runtime.forward (issue 48), no GPU: what its cache key keeps apart and what it
hands back to the full path, and which streams a call must order itself after. The path's calls through a Runtime
are in test_gpu_runtime.py."""
import unittest

from gemmtune import runtime
from fakes import FakeCudaArray, row_major, transposed

ARGS = (True, "gelu", float, 0.01, float, 0.0, "tf32")


def key(*arrays, args=ARGS):
    return runtime._cai_key([a.__cuda_array_interface__ for a in arrays], args)


class CaiKeyTest(unittest.TestCase):
    def test_the_same_shapes_strides_and_arguments_share_a_key_whatever_the_pointers(self):
        first = key(row_major(64, 32, ptr=0x1000), row_major(32, 16), row_major(64, 16))
        second = key(row_major(64, 32, ptr=0x2000), row_major(32, 16, ptr=0x3000), row_major(64, 16, ptr=0x4000))
        self.assertIsNotNone(first)
        self.assertEqual(first, second)

    def test_a_layout_shape_type_read_only_flag_or_argument_change_is_another_key(self):
        base = key(row_major(64, 32), row_major(32, 16), row_major(64, 16))
        others = [key(transposed(64, 32), row_major(32, 16), row_major(64, 16)),
                  key(row_major(64, 32), row_major(32, 17), row_major(64, 17)),
                  key(row_major(64, 32, typestr="<f8", itemsize=8), row_major(32, 16), row_major(64, 16)),
                  key(row_major(64, 32), row_major(32, 16), row_major(64, 16, read_only=True)),
                  key(row_major(64, 32), row_major(32, 16), row_major(64, 16), args=ARGS[:-1] + ("fp32",))]
        for other in others:
            self.assertIsNotNone(other)
            self.assertNotEqual(base, other)

    def test_what_the_full_path_must_judge_at_every_call_has_no_key(self):
        self.assertIsNone(key(row_major(64, 32, ptr=0), row_major(32, 16), row_major(64, 16)))
        self.assertIsNone(key(row_major(64, 32, mask=object()), row_major(32, 16), row_major(64, 16)))
        self.assertIsNone(key(row_major(64, 32, stream=0), row_major(32, 16), row_major(64, 16)))
        missing = FakeCudaArray((64, 32))
        del missing.interface["typestr"]
        self.assertIsNone(key(missing, row_major(32, 16), row_major(64, 16)))

    def test_a_list_shape_keys_as_its_tuple_does(self):
        listed = FakeCudaArray((64, 32))
        listed.interface["shape"] = [64, 32]
        self.assertEqual(key(listed, row_major(32, 16), row_major(64, 16)),
                         key(row_major(64, 32), row_major(32, 16), row_major(64, 16)))


class CaiStreamsTest(unittest.TestCase):
    def test_only_version_3_interfaces_name_a_stream_to_order_after(self):
        interfaces = [row_major(4, 4, stream=0x77).__cuda_array_interface__,
                      row_major(4, 4, stream=None).__cuda_array_interface__,
                      dict(row_major(4, 4, version=2).__cuda_array_interface__, stream=0x99)]
        self.assertEqual(runtime._cai_streams(interfaces), {0x77})


if __name__ == "__main__":
    unittest.main()
