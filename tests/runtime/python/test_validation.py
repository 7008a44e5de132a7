"""What Runtime.forward and Runtime.backward would run, and every wrong argument's error, through plan_forward and
plan_backward: the same checks with no Runtime and no GPU (on a machine without one, a check that touched the GPU
would fail here with NoGpuError)."""
import unittest

import gemmtune
from fakes import FakeCudaArray, row_major, transposed

M, N, K = 1000, 4096, 1024


def bias(n=N, **kwargs):
    return FakeCudaArray((n,), **kwargs)


class ForwardPlanTest(unittest.TestCase):
    def test_problem_is_read_off_the_arrays(self):
        call = gemmtune.plan_forward(row_major(M, K), transposed(K, N), bias(), act="gelu", save_z=True)
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:nt:row:bias+gelu+z:tf32")
        self.assertIsNone(call.out)
        self.assertEqual(call.stream, 0)

    def test_transposed_a_and_transposed_out_set_the_layout_flags(self):
        call = gemmtune.plan_forward(transposed(M, K), row_major(K, N), out=transposed(M, N), mode="fp32")
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:tn:col:none:fp32")

    def test_z_given_saves_z_in_out_layout(self):
        call = gemmtune.plan_forward(row_major(M, K), row_major(K, N), act="relu", z=transposed(M, N))
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:nn:col:relu+z:tf32")

    def test_dropout_and_leaky_slope_reach_the_problem(self):
        call = gemmtune.plan_forward(row_major(M, K), row_major(K, N), act="leaky_relu", leaky_slope=0.2, dropout=0.1,
                                     seed=7, offset_ptr=FakeCudaArray((1,), typestr="<u8", itemsize=8))
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:nn:row:leaky_relu=0.2+dropout=0.1:tf32")
        self.assertNotEqual(call.offset_ptr, 0)

    def assert_names(self, error, argument, **overrides):
        arguments = {"A": row_major(M, K), "B": row_major(K, N), "bias": bias()}
        arguments.update(overrides)
        with self.assertRaisesRegex(error, f"^{argument}: "):
            gemmtune.plan_forward(arguments.pop("A"), arguments.pop("B"), arguments.pop("bias"), **arguments)

    def test_wrong_dtype_raises_type_error_naming_the_array(self):
        self.assert_names(TypeError, "A", A=row_major(M, K, typestr="<f8", itemsize=8))
        self.assert_names(TypeError, "bias", bias=bias(typestr="<i4"))
        self.assert_names(TypeError, "out", out=row_major(M, N, typestr="<f2", itemsize=2))

    def test_wrong_rank_and_strides_raise_value_errors_naming_the_array(self):
        self.assert_names(ValueError, "A", A=FakeCudaArray((M, K, 1)))
        self.assert_names(ValueError, "B", B=FakeCudaArray((K, N), strides=(2 * N, 1)))
        self.assert_names(ValueError, "bias", bias=FakeCudaArray((2, N)))

    def test_shape_mismatches_name_the_array_that_does_not_fit(self):
        self.assert_names(ValueError, "B", B=row_major(K + 1, N))
        self.assert_names(ValueError, "bias", bias=bias(N - 1))
        self.assert_names(ValueError, "out", out=row_major(M, N + 1))
        self.assert_names(ValueError, "z", z=row_major(N, M))
        self.assert_names(ValueError, "z", out=row_major(M, N), z=transposed(M, N))

    def test_read_only_outputs_are_refused(self):
        self.assert_names(ValueError, "out", out=row_major(M, N, read_only=True))

    def test_bad_keyword_values_name_the_keyword(self):
        self.assert_names(ValueError, "act", act="swish")
        self.assert_names(TypeError, "act", act=None)
        self.assert_names(ValueError, "mode", mode="fp16")
        self.assert_names(ValueError, "dropout", dropout=1.0)
        self.assert_names(TypeError, "dropout", dropout="0.1")
        self.assert_names(ValueError, "seed", seed=-1)
        self.assert_names(ValueError, "offset", offset=1 << 64)
        self.assert_names(TypeError, "save_z", save_z=1)
        self.assert_names(ValueError, "leaky_slope", leaky_slope=float("nan"))
        self.assert_names(TypeError, "offset_ptr", offset_ptr=FakeCudaArray((1,)))
        self.assert_names(TypeError, "stream", stream="default")

    def test_arrays_on_another_device_or_the_host_are_refused(self):
        self.assert_names(ValueError, "B", B=row_major(K, N, dlpack_device=(2, 1)))
        self.assert_names(ValueError, "out", out=row_major(M, N, dlpack_device=(1, 0)))
        self.assert_names(ValueError, "offset_ptr",
                          offset_ptr=FakeCudaArray((1,), typestr="<i8", itemsize=8, dlpack_device=(2, 3)))
        with self.assertRaisesRegex(ValueError, "^A: the array is on cuda:0, the runtime on cuda:1"):
            gemmtune.plan_forward(row_major(M, K), row_major(K, N), device=1)

    def test_missing_arrays_are_type_errors(self):
        self.assert_names(TypeError, "A", A=None)
        self.assert_names(TypeError, "B", B=3)


class BackwardPlanTest(unittest.TestCase):
    def test_forward_problem_is_rebuilt_from_the_backward_arrays(self):
        call = gemmtune.plan_backward(row_major(M, K), transposed(K, N), row_major(M, N), z=row_major(M, N),
                                      bias=True, act="gelu")
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:nt:row:bias+gelu+z:tf32")
        self.assertIsNone(call.grad_a)
        self.assertIsNone(call.grad_bias)

    def test_skipped_gradients_and_no_bias(self):
        call = gemmtune.plan_backward(row_major(M, K), row_major(K, N), transposed(M, N), grad_a=False)
        self.assertEqual(call.problem.key, "fwd:1000x4096x1024:nn:col:none:tf32")
        self.assertIs(call.grad_a, False)
        self.assertIs(call.grad_bias, False)

    def assert_names(self, error, argument, **overrides):
        arguments = {"A": row_major(M, K), "B": row_major(K, N), "grad_out": row_major(M, N),
                     "z": row_major(M, N), "bias": True, "act": "gelu"}
        arguments.update(overrides)
        with self.assertRaisesRegex(error, f"^{argument}: "):
            gemmtune.plan_backward(arguments.pop("A"), arguments.pop("B"), arguments.pop("grad_out"), **arguments)

    def test_missing_z_for_an_activation_names_z(self):
        self.assert_names(ValueError, "z", z=None)

    def test_mismatched_arrays_name_themselves(self):
        self.assert_names(ValueError, "grad_out", grad_out=row_major(M, N - 1))
        self.assert_names(ValueError, "z", z=transposed(M, N))
        self.assert_names(ValueError, "grad_a", grad_a=transposed(M, K))
        self.assert_names(ValueError, "grad_b", grad_b=row_major(K, N + 1))
        self.assert_names(ValueError, "grad_bias", grad_bias=bias(N + 1))
        self.assert_names(ValueError, "grad_bias", bias=None, grad_bias=bias())
        self.assert_names(TypeError, "grad_b", grad_b=row_major(K, N, typestr="<f8", itemsize=8))

    def test_bad_keywords_name_themselves(self):
        self.assert_names(ValueError, "act", act="swish")
        self.assert_names(ValueError, "dropout", dropout=-0.5)
        self.assert_names(ValueError, "mode", mode="bf16")


if __name__ == "__main__":
    unittest.main()
