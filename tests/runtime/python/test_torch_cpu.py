"""gemmtune.torch where PyTorch is installed, without a GPU: the module imports, FusedLinear is an nn.Linear by its
parameters, from_linear converts one, and every bad argument raises an error naming it before any CUDA call."""
import unittest

try:
    import torch
    from torch import nn
except ImportError:
    torch = None


def setUpModule():
    if torch is None:
        raise unittest.SkipTest("gemmtune test skipped: PyTorch is not installed")


class FusedLinearCpuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import gemmtune
        import gemmtune.torch as gt
        cls.gemmtune, cls.gt = gemmtune, gt

    def test_parameters_and_initialization_are_nn_linears(self):
        torch.manual_seed(3)
        linear = nn.Linear(24, 40)
        torch.manual_seed(3)
        fused = self.gt.FusedLinear(24, 40, activation="relu")
        self.assertEqual(set(fused.state_dict()), set(linear.state_dict()))
        self.assertTrue(torch.equal(fused.weight, linear.weight))
        self.assertTrue(torch.equal(fused.bias, linear.bias))
        self.assertEqual(fused.weight.shape, (40, 24))
        self.assertIsNone(self.gt.FusedLinear(24, 40, bias=False).bias)
        fused.load_state_dict(nn.Linear(24, 40).state_dict())

    def test_from_linear_shares_the_parameters(self):
        linear = nn.Linear(16, 8, bias=False).eval()
        fused = self.gt.FusedLinear.from_linear(linear, activation="tanh", dropout=0.25, mode="fp32")
        self.assertIs(fused.weight, linear.weight)
        self.assertIsNone(fused.bias)
        self.assertEqual((fused.in_features, fused.out_features), (16, 8))
        self.assertEqual((fused.activation, fused.dropout, fused.mode), ("tanh", 0.25, "fp32"))
        self.assertFalse(fused.training)
        self.assertEqual(fused.dropout_offset.device, linear.weight.device)
        with_bias = self.gt.FusedLinear.from_linear(nn.Linear(4, 6))
        self.assertEqual(with_bias.bias.shape, (6,))
        self.assertIn("activation=gelu", repr(with_bias))

    def test_from_linear_leaves_the_random_generator_to_the_dropout_key_alone(self):
        torch.manual_seed(11)
        self.gt.FusedLinear.from_linear(nn.Linear(64, 64))
        after_conversion = torch.rand(4)
        torch.manual_seed(11)
        nn.Linear(64, 64)
        torch.randint(0, 1 << 62, (1,))  # the dropout key FusedLinear draws; nothing else
        self.assertTrue(torch.equal(torch.rand(4), after_conversion))

    def test_constructor_arguments_are_checked_by_name(self):
        FusedLinear, InputError = self.gt.FusedLinear, self.gemmtune.InputError
        for kwargs, error, word in (({"activation": "swish"}, InputError, "activation"),
                                    ({"dropout": 1.0}, InputError, "dropout"),
                                    ({"mode": "fp16"}, InputError, "mode"),
                                    ({"runtime": "db"}, TypeError, "runtime"),
                                    ({"dtype": torch.float64}, TypeError, "dtype"),
                                    ({"leaky_slope": float("inf")}, InputError, "leaky_slope")):
            with self.subTest(**{k: str(v) for k, v in kwargs.items()}), self.assertRaisesRegex(error, f"^{word}: "):
                FusedLinear(8, 8, **kwargs)
        with self.assertRaisesRegex(InputError, "^in_features: "):
            FusedLinear(0, 8)
        with self.assertRaisesRegex(TypeError, "^out_features: "):
            FusedLinear(8, 8.0)
        with self.assertRaisesRegex(TypeError, "^linear: "):
            FusedLinear.from_linear(nn.Conv1d(2, 2, 1))
        with self.assertRaisesRegex(TypeError, "^linear: "):
            FusedLinear.from_linear(nn.Linear(2, 2).double())

    def test_inputs_are_checked_before_any_cuda_call(self):
        layer, InputError = self.gt.FusedLinear(8, 4), self.gemmtune.InputError
        with self.assertRaisesRegex(InputError, "^input: FusedLinear runs on CUDA tensors"):
            layer(torch.randn(3, 8))
        with self.assertRaisesRegex(TypeError, "^input: .*float32"):
            layer(torch.randn(3, 8, dtype=torch.float64))
        with self.assertRaisesRegex(TypeError, "^input: "):
            layer([[1.0] * 8])

    def test_layout_is_row_major_or_a_transposed_view_and_nothing_else(self):
        def stored_transposed(t, name):
            return self.gt._stored_transposed(*t.shape, t.stride(), name)
        t = torch.empty(6, 10)
        self.assertFalse(stored_transposed(t, "input"))
        self.assertTrue(stored_transposed(t.t(), "input"))
        with self.assertRaisesRegex(self.gemmtune.InputError, "^weight: "):
            stored_transposed(t[:, ::2], "weight")
        self.assertFalse(stored_transposed(torch.empty(4, 10)[::3][:1], "input"), "one row: any row stride")

    def test_default_runtime_needs_a_cuda_device(self):
        with self.assertRaisesRegex(self.gemmtune.InputError, "^device: "):
            self.gt.default_runtime("cpu")
        with self.assertRaisesRegex(TypeError, "^rt: "):
            self.gt.set_default_runtime(object())


if __name__ == "__main__":
    unittest.main()
