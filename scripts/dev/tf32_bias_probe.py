#!/usr/bin/env python3
"""Why a tf32 training step through FusedLinear drifts from nn.Linear's: the error of each GEMM of the step against
fp64, as a systematic gain (out·ref / ref·ref − 1: a scale every output shares, which training accumulates) and as a
relative RMS (which averages out), for the tuned runtime's choice and for PyTorch's tf32 matmul side by side.

usage: tf32_bias_probe.py [--d 1024] [--tokens 1000] [--db-dir DIR]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import bench_torch_step as bench  # noqa: E402


def errors(out, ref):
    out, ref = out.double(), ref.double()
    gain = (out * ref).sum() / (ref * ref).sum() - 1.0
    rms = (out - ref).norm() / ref.norm()
    return f"gain {gain.item():+.2e}  rms {rms.item():.2e}"


def gelu_tanh_grad(z):
    c = 0.7978845608028654
    u = c * (z + 0.044715 * z ** 3)
    t = u.tanh()
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--db-dir", default=tempfile.mkdtemp(prefix="gemmtune-probe-"))
    args = parser.parse_args()

    import torch
    import gemmtune

    d, tokens = args.d, args.tokens
    db = os.path.join(args.db_dir, f"probe_d{d}_t{tokens}.db")
    init_state, x, target, rt = bench.tuned_step_data(torch, gemmtune, d, tokens, "tf32", db)
    bench.torch_mode(torch, "tf32")
    print(f"{torch.cuda.get_device_name()}: d={d} tokens={tokens}, tf32, {rt.cache_size} db entries")

    w1, b1 = init_state["blocks.0.up.weight"], init_state["blocks.0.up.bias"]
    w2, b2 = init_state["blocks.0.down.weight"], init_state["blocks.0.down.bias"]
    y1, z1 = rt.forward(x, w1.t(), b1, act="gelu", save_z=True)
    h = y1
    y2 = rt.forward(h, w2.t(), b2, act="none")
    torch.cuda.synchronize()
    cases = [("up   forward  X·W1ᵀ", z1 - b1, x @ w1.t(), x.double() @ w1.double().t()),
             ("down forward  H·W2ᵀ", y2 - b2, h @ w2.t(), h.double() @ w2.double().t())]

    gy2 = torch.randn(tokens, d, device="cuda")
    gh, gw2t, _ = rt.backward(h, w2.t(), gy2, bias=True, act="none")
    cases += [("down grad A  gY·W2", gh, gy2 @ w2, gy2.double() @ w2.double()),
              ("down grad B  Hᵀ·gY", gw2t, h.t() @ gy2, h.double().t() @ gy2.double())]
    gy1 = torch.randn(tokens, 4 * d, device="cuda")
    gx, gw1t, _ = rt.backward(x, w1.t(), gy1, z=z1, bias=True, act="gelu")
    gz1 = gy1 * gelu_tanh_grad(z1)
    gz1_64 = gy1.double() * gelu_tanh_grad(z1.double())
    cases += [("up   grad A  gZ·W1", gx, gz1 @ w1, gz1_64 @ w1.double()),
              ("up   grad B  Xᵀ·gZ", gw1t, x.t() @ gz1, x.double().t() @ gz1_64)]
    torch.cuda.synchronize()
    for name, ours, theirs, ref in cases:
        print(f"{name:<22} gemmtune: {errors(ours, ref)}   torch tf32: {errors(theirs, ref)}")
    for backward in (False, True):
        print(rt.explain(x, w1.t(), b1, act="gelu", save_z=True, backward=backward))
        print(rt.explain(h, w2.t(), b2, act="none", backward=backward))


if __name__ == "__main__":
    main()
