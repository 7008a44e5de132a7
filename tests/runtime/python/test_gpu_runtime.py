"""gemmtune.Runtime on a GPU, with PyTorch tensors read through __cuda_array_interface__ (and __dlpack__, and CuPy's
arrays where CuPy is installed), against fp64 references: every activation forward and backward, dropout masks that
the backward regenerates, transposed views read in place, CUDA graph replays that draw a new mask each, stream order,
and misses recorded for `gemmtune sweep --from-misses`. Skipped, and said so, without a GPU."""
import os
import sqlite3
import subprocess
import sys
import textwrap
import unittest

import gemmtune
from gpu_support import (ACTIVATIONS, LEAKY_SLOPE, RuntimeTestCase, dropout_keep_mask, grad_of_z_reference,
                         reference_activation, require_gpu_and_torch)

torch = None
M, N, K = 333, 136, 200  # no multiple of 64: edge tiles in every dimension


def setUpModule():
    global torch
    torch = require_gpu_and_torch()


def randn(*shape):
    return torch.randn(*shape, device="cuda")


def poisoned(*shape):
    return torch.full(shape, float("nan"), device="cuda")


class DlpackOnly:
    """An array that speaks only DLPack (a PyTorch tensor behind it)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


class WrittenOnStream:
    """A PyTorch tensor's __cuda_array_interface__ as version 3, naming the stream its data is written on."""

    def __init__(self, t, stream):
        self.interface = dict(t.__cuda_array_interface__, version=3, stream=stream.cuda_stream)

    @property
    def __cuda_array_interface__(self):
        return self.interface


class InterfaceOnly:
    """A PyTorch tensor's memory behind its own __cuda_array_interface__ alone, as CuPy or Numba show theirs."""

    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class RuntimeGpuTest(RuntimeTestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        super().setUpClass()

    def reference(self, A, B, bias, act, keep=None, p=0.0):
        """Y, Z and the fp64 leaves, as autograd computes them in fp64."""
        a, b = A.double().requires_grad_(), B.double().requires_grad_()
        c = bias.double().requires_grad_() if bias is not None else None
        z = a @ b + (c if c is not None else 0)
        y = reference_activation(torch, act)(z)
        if keep is not None:
            y = y * keep.double() / (1 - p)
        return y, z, (a, b, c)

    def assert_backward_close(self, grads, A, B, Z, gY, act, mode, what, keep=None, p=0.0):
        """gA, gB and gBias against fp64 at the forward's own Z (grad_of_z_reference): gA = gZ·op(B)ᵀ,
        gB = op(A)ᵀ·gZ, gBias = Σ_rows gZ."""
        gz = grad_of_z_reference(torch, act, Z, gY, keep, p)
        refs = (gz @ B.double().t(), A.double().t() @ gz, gz.sum(0))
        for name, g, ref in zip(("gA", "gB", "gBias"), grads, refs):
            self.assert_close(g, ref, mode, (M, N, K), name + what)

    def test_forward_matches_fp64_for_every_activation_and_mode(self):
        A, B, bias = randn(M, K), randn(K, N), randn(N)
        for mode in ("tf32", "fp32"):
            for act in ACTIVATIONS:
                with self.subTest(mode=mode, act=act):
                    out, z = poisoned(M, N), poisoned(M, N)
                    Y, Z = self.rt.forward(A, B, bias, act=act, leaky_slope=LEAKY_SLOPE, out=out, z=z, mode=mode)
                    self.assertIs(Y, out)
                    self.assertIs(Z, z)
                    y_ref, z_ref, _ = self.reference(A, B, bias, act)
                    torch.cuda.synchronize()
                    self.assert_close(Z, z_ref, mode, (K,), "Z")
                    self.assert_close(Y, y_ref, mode, (K,), "Y")

    def test_backward_matches_fp64_for_every_activation_and_mode(self):
        A, B, bias, gY = randn(M, K), randn(K, N), randn(N), randn(M, N)
        for mode in ("tf32", "fp32"):
            for act in ACTIVATIONS:
                with self.subTest(mode=mode, act=act):
                    _, Z = self.rt.forward(A, B, bias, act=act, leaky_slope=LEAKY_SLOPE, save_z=True, mode=mode)
                    gA, gB, gBias = poisoned(M, K), poisoned(K, N), poisoned(N)
                    got = self.rt.backward(A, B, gY, z=Z, bias=bias, act=act, leaky_slope=LEAKY_SLOPE, mode=mode,
                                           grad_a=gA, grad_b=gB, grad_bias=gBias)
                    self.assertEqual([id(g) for g in got], [id(gA), id(gB), id(gBias)])
                    torch.cuda.synchronize()
                    self.assert_backward_close(got, A, B, Z, gY, act, mode, "")

    def assert_y_shows_mask(self, Y, Z, keep, p, what):
        """Y is 0 exactly where the mask drops an element, but only where gelu(Z) is clearly not 0 can it show that:
        where Z is far below 0 (as Z of k = 200 random products often is) gelu(Z) is 0 or nearly, and so is Y."""
        visible = reference_activation(torch, "gelu")(Z.double()).abs() > 1e-3
        self.assertGreater(visible.double().mean().item(), 0.3, f"{what}: Y shows the mask at too few elements")
        wrong = ((Y != 0) != keep)[visible]
        self.assertEqual(int(wrong.sum().item()), 0, f"{what}: elements of Y whose mask is not Philox's")
        dropped = 1.0 - (Y != 0)[visible].double().mean().item()
        self.assertAlmostEqual(dropped, p, delta=0.02, msg=what)

    def test_dropout_mask_is_philox_of_seed_and_offset_and_the_backward_regenerates_it(self):
        A, B, bias, gY, p = randn(M, K), randn(K, N), randn(N), randn(M, N), 0.3
        Y, Z = self.rt.forward(A, B, bias, act="gelu", dropout=p, seed=42, offset=5, save_z=True)
        keep = torch.tensor(dropout_keep_mask(42, 5, M, N, p), device="cuda")
        torch.cuda.synchronize()
        self.assert_y_shows_mask(Y, Z, keep, p, "seed 42, offset 5")
        y_ref, _, _ = self.reference(A, B, bias, "gelu", keep, p)
        self.assert_close(Y, y_ref, "tf32", (K,), "Y with dropout")
        grads = self.rt.backward(A, B, gY, z=Z, bias=True, act="gelu", dropout=p, seed=42, offset=5)
        self.assert_backward_close(grads, A, B, Z, gY, "gelu", "tf32", " with the regenerated mask", keep, p)
        again, _ = self.rt.forward(A, B, bias, act="gelu", dropout=p, seed=42, offset=5, save_z=True)
        self.assertTrue(torch.equal(again, Y), "the same problem, seed and offset must give the same bits")
        next_step, next_z = self.rt.forward(A, B, bias, act="gelu", dropout=p, seed=42, offset=6, save_z=True)
        next_keep = torch.tensor(dropout_keep_mask(42, 6, M, N, p), device="cuda")
        torch.cuda.synchronize()
        self.assert_y_shows_mask(next_step, next_z, next_keep, p, "seed 42, offset 6")
        self.assertGreater((next_keep != keep).double().mean().item(), 0.2, "a new offset, a new mask")

    def test_transposed_views_are_read_and_written_in_place(self):
        A, B, bias, gY = randn(K, M).t(), randn(N, K).t(), randn(N), randn(N, M).t()
        out = poisoned(N, M).t()
        address = out.data_ptr()
        Y, Z = self.rt.forward(A, B, bias, act="tanh", out=out, save_z=True)
        self.assertEqual(Y.data_ptr(), address)
        self.assertEqual(Z.stride(), out.stride(), "Z is stored as Y is")
        self.assertEqual(self.rt.explain(A, B, bias, act="tanh", save_z=True, out=out).split(":")[2], "tt")
        y_ref, _, _ = self.reference(A, B, bias, "tanh")
        self.assert_close(Y, y_ref, "tf32", (K,), "Y of transposed views")
        gA, gB, gBias = self.rt.backward(A, B, gY, z=Z, bias=True, act="tanh")
        self.assertEqual((gA.stride(), gB.stride()), (A.stride(), B.stride()), "gradients are stored as inputs are")
        self.assert_backward_close((gA, gB, gBias), A, B, Z, gY, "tanh", "tf32", " of transposed views")

    def test_graph_replays_draw_a_new_mask_each_and_match_eager_calls_at_those_offsets(self):
        A, B, p = randn(M, K), randn(K, N), 0.5
        counter = torch.full((1,), 7, dtype=torch.int64, device="cuda")
        Y, Z = poisoned(M, N), poisoned(M, N)
        kwargs = dict(act="none", dropout=p, seed=9, out=Y, z=Z)
        self.rt.forward(A, B, offset_ptr=counter, **kwargs)  # resolves the problem: no allocation inside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.rt.forward(A, B, offset_ptr=counter, **kwargs)
            gemmtune.Runtime.advance_offset(counter, 1)
        replays = []
        for _ in range(3):
            graph.replay()
            replays.append(Y.clone())
        torch.cuda.synchronize()
        self.assertEqual(counter.item(), 10)
        for i, replay in enumerate(replays):
            eager, _ = self.rt.forward(A, B, act="none", dropout=p, seed=9, offset=7 + i, z=poisoned(M, N))
            self.assertTrue(torch.equal(replay, eager), f"replay {i + 1} must equal the eager call at offset {7 + i}")
        self.assertFalse(torch.equal(replays[0] != 0, replays[1] != 0), "each replay draws its own mask")

    def test_calls_wait_for_the_stream_an_array_interface_names(self):
        producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
        A, B, source, out = torch.zeros(M, K, device="cuda"), randn(K, N), randn(M, K), poisoned(M, N)
        torch.cuda.synchronize()
        with torch.cuda.stream(producer):
            torch.cuda._sleep(50_000_000)  # tens of milliseconds: the consumer would read zeros if it did not wait
            A.copy_(source)
        self.rt.forward(WrittenOnStream(A, producer), B, out=out, stream=consumer)
        consumer.synchronize()
        y_ref, _, _ = self.reference(source, B, None, "none")
        self.assert_close(out, y_ref, "tf32", (K,), "Y after waiting for the producer's stream")

    def test_dlpack_only_arrays_and_stream_objects(self):
        A, B = randn(M, K), randn(K, N)
        out = poisoned(M, N)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        self.rt.forward(DlpackOnly(A), DlpackOnly(B), out=DlpackOnly(out), act="relu", stream=side)
        side.synchronize()
        y_ref, _, _ = self.reference(A, B, None, "relu")
        self.assert_close(out, y_ref, "tf32", (K,), "Y through DLPack")
        with self.assertRaisesRegex(TypeError, "^out: "):
            self.rt.forward(DlpackOnly(A), DlpackOnly(B))

    def test_tensors_that_require_grad_are_refused_by_name(self):
        with self.assertRaisesRegex(TypeError, "^B: reading its __cuda_array_interface__ failed"):
            self.rt.forward(randn(4, 4), randn(4, 4).requires_grad_())

    def test_torch_tensors_are_checked_once_per_layout_and_compute_what_the_array_interface_path_computes(self):
        A, B, bias = randn(M, K), randn(K, N), randn(N)
        fast, full = poisoned(M, N), poisoned(M, N)
        resolved = len(self.rt._torch_forwards)
        for seed in (3, 4):  # the first call checks and resolves, the second reads the pointers alone
            self.rt.forward(A, B, bias, act="gelu", dropout=0.25, seed=seed, offset=9, out=fast)
            self.rt.forward(InterfaceOnly(A), InterfaceOnly(B), InterfaceOnly(bias), act="gelu", dropout=0.25,
                            seed=seed, offset=9, out=InterfaceOnly(full))
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(fast, full), f"seed {seed}: the tensors' path differs from the interface's")
        self.assertEqual(len(self.rt._torch_forwards), resolved + 1, "one layout, one resolution")
        At = randn(K, M).t()  # another layout of A: checked and resolved on its own
        self.rt.forward(At, B, bias, act="gelu", out=fast)
        y_ref, _, _ = self.reference(At, B, bias, "gelu")
        self.assert_close(fast, y_ref, "tf32", (K,), "Y of a transposed A after a row-major one")
        self.assertEqual(len(self.rt._torch_forwards), resolved + 2)
        with self.assertRaisesRegex(gemmtune.InputError, "^out: shape"):  # a mismatch is still found after a good call
            self.rt.forward(A, B, bias, act="gelu", out=poisoned(M, N + 1))
        with self.assertRaisesRegex(gemmtune.InputError, "seed"):
            self.rt.forward(A, B, bias, act="gelu", dropout=0.25, seed=-1, offset=9, out=fast)

    def test_array_interfaces_are_checked_once_per_layout_and_every_call_waits_for_the_stream_one_names(self):
        B, bias = randn(K, N), randn(N)
        resolved = len(self.rt._protocol_forwards)
        for call in range(2):  # the first call checks and resolves, the second reads the interfaces alone
            producer = torch.cuda.Stream()
            A, source, out = torch.zeros(M, K, device="cuda"), randn(M, K), poisoned(M, N)
            torch.cuda.synchronize()
            with torch.cuda.stream(producer):
                torch.cuda._sleep(50_000_000)  # tens of milliseconds: a call that did not wait would read zeros
                A.copy_(source)
            self.rt.forward(WrittenOnStream(A, producer), InterfaceOnly(B), InterfaceOnly(bias), act="gelu",
                            out=InterfaceOnly(out))
            torch.cuda.synchronize()
            y_ref, _, _ = self.reference(source, B, bias, "gelu")
            self.assert_close(out, y_ref, "tf32", (K,), f"call {call + 1}: Y after waiting for the producer's stream")
        self.assertEqual(len(self.rt._protocol_forwards), resolved + 1, "one layout, one resolution")
        with self.assertRaisesRegex(gemmtune.InputError, "^out: shape"):  # a mismatch is still found after a good call
            self.rt.forward(InterfaceOnly(randn(M, K)), InterfaceOnly(B), InterfaceOnly(bias), act="gelu",
                            out=InterfaceOnly(poisoned(M, N + 1)))

    def test_dlpack_arrays_are_checked_once_per_layout_and_compute_what_the_tensors_path_computes(self):
        A, B, bias = randn(M, K), randn(K, N), randn(N)  # sigmoid: a layout no other test's tensors resolve
        resolved = len(self.rt._protocol_forwards)
        for seed in (3, 4):  # the first call checks and resolves, the second reads the capsules alone
            fast, through_dlpack = poisoned(M, N), poisoned(M, N)
            self.rt.forward(A, B, bias, act="sigmoid", dropout=0.25, seed=seed, offset=9, out=fast)
            self.rt.forward(DlpackOnly(A), DlpackOnly(B), DlpackOnly(bias), act="sigmoid", dropout=0.25, seed=seed,
                            offset=9, out=DlpackOnly(through_dlpack))
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(fast, through_dlpack), f"seed {seed}: DLPack's path differs from the tensors'")
        self.assertEqual(len(self.rt._protocol_forwards), resolved + 1, "one layout, one resolution")
        with self.assertRaisesRegex(gemmtune.InputError, "^out: shape"):  # a mismatch is still found after a good call
            self.rt.forward(DlpackOnly(A), DlpackOnly(B), DlpackOnly(bias), act="sigmoid",
                            out=DlpackOnly(poisoned(M, N + 1)))
        with self.assertRaisesRegex(gemmtune.InputError, "seed"):
            self.rt.forward(DlpackOnly(A), DlpackOnly(B), DlpackOnly(bias), act="sigmoid", dropout=0.25, seed=-1,
                            out=DlpackOnly(poisoned(M, N)))

    def test_a_resolved_layout_whose_pointer_is_host_memory_is_refused_by_the_full_path(self):
        A, B, out = randn(M, K), randn(K, N), poisoned(M, N)
        self.rt.forward(InterfaceOnly(A), InterfaceOnly(B), out=InterfaceOnly(out))  # resolves the layout
        host = torch.empty(M, K, pin_memory=True)  # a real address CUDA knows, but not device memory
        fake = InterfaceOnly(A)
        fake.__cuda_array_interface__ = dict(fake.__cuda_array_interface__, data=(host.data_ptr(), False))
        with self.assertRaisesRegex(gemmtune.InputError, "^A: the address is not CUDA device memory"):
            self.rt.forward(fake, InterfaceOnly(B), out=InterfaceOnly(out))

    def test_a_call_repeated_on_the_same_tensors_is_replayed_and_computes_the_same(self):
        rt = gemmtune.Runtime(os.path.join(self.tmp.name, "replays.db"))
        A, B, bias, out = randn(M, K), randn(K, N), randn(N), poisoned(M, N)
        results = []
        for _ in range(3):
            out.fill_(float("nan"))
            torch.cuda.synchronize()  # a repeated call is captured where its stream has drained
            rt.forward(A, B, bias, act="gelu", out=out)
            torch.cuda.synchronize()
            results.append(out.clone())
        self.assertEqual(rt.call_graphs, (1, 2), "captured at the second call, replayed at the second and third")
        self.assertTrue(all(torch.equal(r, results[0]) for r in results), "a replay differs from the launched call")
        y_ref, _, _ = self.reference(A, B, bias, "gelu")
        self.assert_close(results[0], y_ref, "tf32", (K,), "Y of the launched call")
        off = gemmtune.Runtime(os.path.join(self.tmp.name, "replays.db"), replay_repeated_calls=False)
        for _ in range(3):
            off.forward(A, B, bias, act="gelu", out=out)
        self.assertEqual(off.call_graphs, (0, 0))

    def test_time_forward_times_calls_that_compute_the_forward_and_refuses_none(self):
        rt = gemmtune.Runtime(os.path.join(self.tmp.name, "timed.db"))
        A, B, bias, out = randn(M, K), randn(K, N), randn(N), poisoned(M, N)
        problem = gemmtune.Problem(M, N, K, bias=True, act="gelu")
        stream = torch.cuda.current_stream().cuda_stream
        us = rt._rt.time_forward(problem, A.data_ptr(), B.data_ptr(), bias.data_ptr(), out.data_ptr(), stream, 5)
        self.assertGreater(us, 0)
        y_ref, _, _ = self.reference(A, B, bias, "gelu")
        self.assert_close(out, y_ref, "tf32", (K,), "Y of the timed calls")
        with self.assertRaisesRegex(gemmtune.InputError, "calls must be at least 1"):
            rt._rt.time_forward(problem, A.data_ptr(), B.data_ptr(), bias.data_ptr(), out.data_ptr(), stream, 0)

    def test_prepare_and_explain(self):
        problem = gemmtune.Problem(77, 99, 55, bias=True, act="sigmoid", save_z=True)
        self.assertFalse(self.rt.prepared(problem))
        self.rt.prepare(problem, backward=True)
        self.assertTrue(self.rt.prepared(problem))
        self.assertTrue(self.rt.explain(problem).startswith(problem.key + ": "))
        self.assertEqual(len(self.rt.explain(problem.key, backward=True).splitlines()), 3)
        with self.assertRaisesRegex(TypeError, "stands alone"):
            self.rt.explain(problem, act="relu")

    def test_misses_are_recorded_where_sweep_from_misses_reads_them(self):
        db = os.path.join(self.tmp.name, "misses.db")
        child = textwrap.dedent("""
            import sys, torch, gemmtune
            rt = gemmtune.Runtime(sys.argv[1])
            rt.forward(torch.randn(123, 45, device="cuda"), torch.randn(45, 67, device="cuda"), act="relu")
            torch.cuda.synchronize()
            print(rt.device_key)
        """)  # no flush: the exit must write the misses
        done = subprocess.run([sys.executable, "-c", child, db], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        device_key = done.stdout.strip().splitlines()[-1]
        with sqlite3.connect(db) as conn:
            keys = {row[0] for row in conn.execute("SELECT problem_key FROM misses WHERE device_key = ?",
                                                   (device_key,))}
        self.assertIn("fwd:123x67x45:nn:row:relu:tf32", keys)
        cli = os.environ.get("GEMMTUNE_CLI")
        if cli:
            plan = subprocess.run([cli, "sweep", "--from-misses", "--db", db, "--device-key", device_key, "--dry-run"],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(plan.returncode, 0, plan.stderr)
            self.assertIn("123x67x45", plan.stdout)

    def test_a_runtime_given_no_db_writes_the_default_one_and_names_the_variable_when_it_cannot(self):
        child = textwrap.dedent("""
            import torch, gemmtune
            rt = gemmtune.Runtime()
            rt.forward(torch.randn(124, 45, device="cuda"), torch.randn(45, 67, device="cuda"))
            torch.cuda.synchronize()
            print(rt.db)
        """)  # no flush: the exit must create the cache directories and write the misses
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.tmp.name, "cache"))
        env.pop("GEMMTUNE_DB", None)
        done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        db = os.path.join(self.tmp.name, "cache", "gemmtune", "gemmtune.db")
        self.assertEqual(done.stdout.strip().splitlines()[-1], db)
        with sqlite3.connect(db) as conn:
            keys = {row[0] for row in conn.execute("SELECT problem_key FROM misses")}
        self.assertIn("fwd:124x67x45:nn:row:none:tf32", keys)

        blocker = os.path.join(self.tmp.name, "a-file")
        with open(blocker, "w") as f:
            f.write("not a directory")
        env["GEMMTUNE_DB"] = os.path.join(blocker, "tune.db")
        refused = textwrap.dedent("""
            import torch, gemmtune
            rt = gemmtune.Runtime()
            rt.forward(torch.randn(125, 45, device="cuda"), torch.randn(45, 67, device="cuda"))
            try:
                rt.flush()
            except gemmtune.InputError as e:
                print("flush:", e)
        """)  # the misses stay pending, so the exit tries again and warns
        done = subprocess.run([sys.executable, "-c", refused], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, "flush: cannot write the default db .*tune.db \\(placed by GEMMTUNE_DB\\)")
        warnings = [line for line in done.stderr.splitlines() if "could not record the cache misses" in line]
        self.assertEqual(len(warnings), 1, done.stderr)
        self.assertIn("placed by GEMMTUNE_DB", warnings[0])


class CupyTest(RuntimeTestCase):
    DB_NAME = "cupy.db"

    @classmethod
    def setUpClass(cls):
        try:
            import cupy
        except ImportError:
            raise unittest.SkipTest("CuPy is not installed")
        cls.cp = cupy
        super().setUpClass()

    def test_cupy_arrays_in_and_out_on_cupys_current_stream(self):
        cp = self.cp
        A = cp.random.standard_normal((M, K), dtype=cp.float32)
        B = cp.asfortranarray(cp.random.standard_normal((K, N), dtype=cp.float32))  # read as a transposed view
        bias = cp.random.standard_normal(N, dtype=cp.float32)
        cp.cuda.Device().synchronize()  # made on the legacy stream, which a non-blocking stream does not wait for
        with cp.cuda.Stream(non_blocking=True) as stream:
            Y = self.rt.forward(A, B, bias, act="gelu_erf")
            self.assertIsInstance(Y, cp.ndarray)
            stream.synchronize()
        z_ref = torch.as_tensor(A, device="cuda").double() @ torch.as_tensor(B, device="cuda").double()
        y_ref = reference_activation(torch, "gelu_erf")(z_ref + torch.as_tensor(bias, device="cuda").double())
        self.assert_close(torch.as_tensor(Y, device="cuda"), y_ref, "tf32", (K,), "Y of CuPy arrays")


if __name__ == "__main__":
    unittest.main()
