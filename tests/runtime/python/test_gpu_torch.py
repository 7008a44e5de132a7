"""gemmtune.torch.FusedLinear on a GPU against fp64 PyTorch: forward and backward for every activation and mode, with
and without dropout (the mask recovered from Y), transposed weight and input views, the current stream, and a
training step captured by torch.cuda.graph whose replays draw a new mask each. Skipped, and said so, without a GPU."""
import unittest

import gemmtune
from gpu_support import (ACTIVATIONS, LEAKY_SLOPE, RuntimeTestCase, grad_of_z_reference, reference_activation,
                         require_gpu_and_torch)

torch = gt = None
BATCH, ROWS, IN, OUT = 2, 150, 200, 136  # 300 rows of 200 -> 136: no multiple of 64


def setUpModule():
    global torch, gt
    torch = require_gpu_and_torch()
    import gemmtune.torch
    gt = gemmtune.torch


def saved_z(y):
    """The pre-activation Z the fused forward of y saved for its backward (None where it saved none: no activation)."""
    node = y.grad_fn
    while node is not None and not type(node).__name__.startswith("_FusedLinearFunction"):
        node = node.next_functions[0][0]
    return node.saved_tensors[2]


class FusedLinearGpuTest(RuntimeTestCase):
    DB_NAME = "torch.db"

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        super().setUpClass()

    def layer(self, **kwargs):
        kwargs.setdefault("runtime", self.rt)
        return gt.FusedLinear(IN, OUT, leaky_slope=LEAKY_SLOPE, **kwargs).cuda()

    def reference(self, layer, x, keep=None):
        """The layer's output in fp64 and the fp64 leaves (x, weight, bias) its backward differentiates."""
        x64 = x.detach().double().requires_grad_()
        w64 = layer.weight.detach().double().requires_grad_()
        b64 = layer.bias.detach().double().requires_grad_()
        y = reference_activation(torch, layer.activation)(x64 @ w64.t() + b64)
        if keep is not None:
            y = y * keep.double() / (1 - layer.dropout)
        return y, (x64, w64, b64)

    def check_step(self, layer, x, keep_of=None):
        """One forward and backward of layer against fp64, for an x of any leading dimensions: Y against the fp64
        forward, the gradients against fp64 at the Z the fused forward saved (grad_of_z_reference)."""
        x = x.detach().requires_grad_()
        y = layer(x)
        self.assertEqual(y.shape, (*x.shape[:-1], OUT))
        keep = keep_of(y) if keep_of else None
        y_ref, (x64, w64, _) = self.reference(layer, x, keep)
        self.assert_close(y, y_ref, layer.mode, (IN,), "Y")
        z = saved_z(y)
        gy = torch.randn_like(y)
        y.backward(gy)
        gy2 = gy.reshape(-1, OUT)
        gz = grad_of_z_reference(torch, layer.activation, z, gy2, keep, layer.dropout) if z is not None else \
            (gy2.double() * (keep.double().reshape(gy2.shape) / (1 - layer.dropout) if keep is not None else 1))
        x2 = x64.detach().reshape(-1, IN)
        refs = (gz @ w64.detach(), gz.t() @ x2, gz.sum(0))
        grads = (x.grad.reshape(-1, IN), layer.weight.grad, layer.bias.grad)
        for name, g, ref in zip(("gX", "gW", "gBias"), grads, refs):
            self.assert_close(g, ref, layer.mode, (BATCH * ROWS, IN, OUT), name)
        return y

    def test_forward_and_backward_match_fp64_for_every_activation_and_mode(self):
        x = torch.randn(BATCH, ROWS, IN, device="cuda")
        for mode in ("tf32", "fp32"):
            for act in ACTIVATIONS:
                with self.subTest(mode=mode, activation=act):
                    self.check_step(self.layer(activation=act, mode=mode), x)

    def test_dropout_mask_recovered_from_y_is_the_one_the_backward_applies_and_changes_every_call(self):
        x = torch.randn(BATCH, ROWS, IN, device="cuda")
        for act in ("gelu", "sigmoid", "none"):
            with self.subTest(activation=act):
                layer = self.layer(activation=act, dropout=0.25)
                # act(Z) is never exactly 0 for these, so a zero in Y is a dropped element.
                y1 = self.check_step(layer, x, keep_of=lambda y: y.detach() != 0)
                self.assertAlmostEqual(1.0 - (y1 != 0).double().mean().item(), 0.25, delta=0.02)
                layer.weight.grad = layer.bias.grad = None
                y2 = self.check_step(layer, x, keep_of=lambda y: y.detach() != 0)
                self.assertGreater(((y1 != 0) != (y2 != 0)).double().mean().item(), 0.2, "a new mask each call")
                self.assertEqual(layer.dropout_offset.item(), 2)
                layer.eval()
                self.assertTrue(bool((layer(x) != 0).all()), "no dropout in eval mode")

    def test_transposed_weight_and_input_views_are_read_in_place(self):
        layer = self.layer(activation="leaky_relu")
        layer.weight = torch.nn.Parameter(torch.randn(IN, OUT, device="cuda").t())  # stored [in, out]: B row-major
        x = torch.randn(IN, BATCH * ROWS, device="cuda").t()                         # X stored transposed
        self.check_step(layer, x)
        problems = {call.problem.key for call in layer._calls.values()}
        self.assertEqual(problems, {f"fwd:{BATCH * ROWS}x{OUT}x{IN}:tn:row:bias+leaky_relu=0.01+z:tf32"})

    def test_parameters_replaced_after_a_call_are_checked_again_not_read_out_of_bounds(self):
        layer = self.layer()
        x = torch.randn(ROWS, IN, device="cuda")
        layer(x)
        layer.weight = torch.nn.Parameter(torch.randn(OUT - 8, IN, device="cuda"))  # the strides of the first
        with self.assertRaisesRegex(gemmtune.InputError, "^weight: its shape"):
            layer(x)
        layer.weight = torch.nn.Parameter(torch.randn(OUT, IN, device="cuda", dtype=torch.float64))
        with self.assertRaisesRegex(TypeError, "^weight: "):
            layer(x)
        layer.weight = torch.nn.Parameter(torch.randn(OUT, IN, device="cuda"))
        layer.bias = torch.nn.Parameter(torch.randn(OUT + 8, device="cuda"))
        with self.assertRaisesRegex(gemmtune.InputError, "^bias: its shape"):
            layer(x)
        layer.bias = torch.nn.Parameter(torch.randn(OUT, device="cuda"))
        self.check_step(layer, x)

    def test_strided_inputs_are_an_error_not_a_copy(self):
        layer = self.layer()
        with self.assertRaisesRegex(gemmtune.InputError, "^input: "):
            layer(torch.randn(BATCH * ROWS, 2 * IN, device="cuda")[:, ::2])
        with self.assertRaisesRegex(gemmtune.InputError, "^input: .*cannot be flattened"):
            layer(torch.randn(ROWS, BATCH, IN, device="cuda").transpose(0, 1))

    def test_from_linear_computes_what_linear_and_gelu_compute(self):
        linear = torch.nn.Linear(IN, OUT).cuda()
        fused = gt.FusedLinear.from_linear(linear, activation="gelu", mode="fp32", runtime=self.rt)
        x = torch.randn(BATCH * ROWS, IN, device="cuda")
        with torch.no_grad():
            y_ref = torch.nn.functional.gelu(torch.nn.functional.linear(x.double(), linear.weight.double(),
                                                                        linear.bias.double()), approximate="tanh")
            self.assert_close(fused(x), y_ref, "fp32", (IN,), "from_linear's Y")

    def test_calls_run_on_the_current_stream(self):
        layer, side = self.layer(activation="relu"), torch.cuda.Stream()
        source = torch.randn(BATCH * ROWS, IN, device="cuda")
        x = torch.zeros_like(source)
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)  # had the layer run on another stream, it would read zeros
            x.copy_(source)
            self.assertEqual(gt._current_stream(x.get_device()), side.cuda_stream)
            y = layer(x)
        side.synchronize()
        with torch.no_grad():
            y_ref, _ = self.reference(layer, source)
        self.assert_close(y, y_ref, "tf32", (IN,), "Y on a side stream")

    def test_captured_training_step_replays_with_a_new_mask_each_and_equals_eager_steps(self):
        model = torch.nn.Sequential(self.layer(activation="gelu", dropout=0.3),
                                    gt.FusedLinear(OUT, 40, activation="none", runtime=self.rt).cuda())
        x, target = torch.randn(BATCH * ROWS, IN, device="cuda"), torch.randn(BATCH * ROWS, 40, device="cuda")

        def step():
            y = model(x)
            ((y - target) ** 2).mean().backward()
            return y

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # eager first: resolves every problem of the step
            for _ in range(2):
                model.zero_grad(set_to_none=True)
                step()
        torch.cuda.current_stream().wait_stream(side)
        model.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y_static = step()
        counter = model[0].dropout_offset
        replays = []
        for offset in (100, 101):
            counter.fill_(offset)
            graph.replay()
            replays.append((y_static.clone(), model[0].weight.grad.clone(), model[1].weight.grad.clone()))
        torch.cuda.synchronize()
        self.assertFalse(torch.equal(replays[0][0], replays[1][0]), "each replay draws its own mask")
        for offset, replay in zip((100, 101), replays):
            counter.fill_(offset)
            model.zero_grad(set_to_none=True)
            y = step()
            eager = (y.detach(), model[0].weight.grad, model[1].weight.grad)
            for name, r, e in zip(("Y", "gW1", "gW2"), replay, eager):
                self.assertTrue(torch.equal(r, e), f"{name}: the replay at offset {offset} differs from the eager "
                                                   f"step at that offset")

    def test_first_call_of_a_shape_inside_a_capture_is_refused_clearly(self):
        layer = self.layer(activation="relu")
        x = torch.randn(77, IN, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with self.assertRaisesRegex(gemmtune.InputError, "inside a CUDA graph capture"):
            with torch.cuda.graph(graph):
                layer(x)


if __name__ == "__main__":
    unittest.main()
