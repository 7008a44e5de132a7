"""scripts/report.py's roofline labels the cases that matter (the farthest below their ceiling, the nearest, each mode's
fastest and slowest) and no label overlaps another label or a point, on caches as crowded as a real sweep's: the
`default` profile (9 shapes x 6 epilogues x 2 modes, the epilogues of one shape on top of each other) and a 32-problem
held-out sweep. The texts' boxes are measured again from the drawn figure, not taken from the placement's own
bookkeeping. Needs matplotlib; no GPU."""
import itertools
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts"))
import report  # noqa: E402  (the script under test, found beside the tests)
from matplotlib.text import Text  # noqa: E402

H200 = {"dram_tbytes_per_s": 4.8, "model": "H200 SXM", "nominal": True,
        "tflops": {"3xtf32": 165.0, "fp32": 67.0, "tf32": 495.0}}
DEFAULT_SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
                  (256, 4096, 4096), (1024, 4096, 1024), (768, 3072, 768), (4096, 4096, 256)]
DEFAULT_EPILOGUES = ["none", "bias", "bias+relu", "bias+gelu", "bias+relu+z", "bias+gelu+z"]


def case(m, n, k, epilogue, mode, share):
    """A cache entry as report.json has it, at `share` of its roofline bound (what classify_roofline computes)."""
    dram_bytes = 4.0 * (m * k + k * n + m * n + (n if "bias" in epilogue else 0) + (m * n if "+z" in epilogue else 0))
    flops = 2.0 * m * n * k
    intensity = flops / dram_bytes
    attainable = min(H200["tflops"][mode], intensity * H200["dram_tbytes_per_s"])
    return {"shape": "%dx%dx%d" % (m, n, k), "pass": "fwd", "layout": "nn", "out": "row", "epilogue": epilogue,
            "mode": mode, "tflops": share * attainable,
            "roofline": {"intensity": intensity, "pct_of_bound": 100 * share, "bytes_source": "analytic minimum",
                         "bound": "memory" if attainable < H200["tflops"][mode] else "compute"}}


def default_profile_cache():
    rng = random.Random(1)
    cache = []
    for (m, n, k), mode in itertools.product(DEFAULT_SHAPES, ("tf32", "fp32")):
        share = rng.uniform(0.15, 0.9)
        for epilogue in DEFAULT_EPILOGUES:  # the epilogues of one shape within a few percent of each other
            cache.append(case(m, n, k, epilogue, mode, share * rng.uniform(0.95, 1.05)))
    return cache


def heldout_cache(problems=32):
    """Model-like shapes as scripts/heldout_shapes.py draws them: a few decode rows, tokens up to 8192, LLM widths."""
    rng = random.Random(2)
    dims = [768, 1024, 2048, 3072, 4096, 5120, 8192, 11008, 13824, 14336]
    cache = []
    while len(cache) < problems:
        m = rng.choice([rng.randint(1, 63), int(math.exp(rng.uniform(math.log(64), math.log(8192))))])
        n, k = rng.choice(dims), rng.choice(dims)
        for mode in ("tf32", "fp32"):
            for epilogue in ("none", "bias+gelu"):
                cache.append(case(m, n, k, epilogue, mode, rng.uniform(0.05, 0.9)))
    return cache[:problems]


class RooflineLabelsTest(unittest.TestCase):
    def draw(self, cache, peaks):
        fig = report.draw_roofline({"peaks": peaks, "cache": cache})
        self.addCleanup(report.plt.close, fig)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        labels = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in ax.texts]
        radius = 3.0 * fig.dpi / 72.0  # a default marker is 6 points across
        points = [p for c in ax.collections for p in ax.transData.transform(c.get_offsets())]
        return ax.get_window_extent(renderer), labels, points, radius

    def assert_readable(self, cache, peaks=H200):
        """Every pick labelled, no label over another or a point, all inside the axes. Also run on a real report's
        cache by scripts/dev/default_db_device_check.sh."""
        frame, labels, points, radius = self.draw(cache, peaks)
        picks = report.roofline_picks([c for c in cache if c.get("roofline")])
        self.assertEqual(sorted(text for text, _ in labels), sorted(report.roofline_label(c) for c in picks),
                         "every pick gets its label")
        for (text_a, a), (text_b, b) in itertools.combinations(labels, 2):
            self.assertFalse(a.overlaps(b), "'%s' overlaps '%s'" % (text_a, text_b))
        for text, box in labels:
            self.assertTrue(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1,
                            "'%s' leaves the axes" % text)
            for x, y in points:  # the nearest point of the box to the marker's centre is outside the marker
                dx, dy = max(box.x0 - x, 0, x - box.x1), max(box.y0 - y, 0, y - box.y1)
                self.assertGreater(math.hypot(dx, dy), radius, "'%s' covers the point at (%.0f, %.0f)" % (text, x, y))
        return labels

    def test_the_default_profiles_cache_gets_every_label_apart(self):
        cache = default_profile_cache()
        self.assertEqual(len(cache), 108)
        labels = self.assert_readable(cache)
        farthest = min(cache, key=lambda c: c["roofline"]["pct_of_bound"])
        self.assertIn(report.roofline_label(farthest), [text for text, _ in labels])

    def test_a_32_problem_heldout_sweep_gets_every_label_apart(self):
        self.assert_readable(heldout_cache(32))

    def test_the_picks_are_the_farthest_the_nearest_and_each_modes_fastest_and_slowest(self):
        cache = heldout_cache(32)
        picks = report.roofline_picks(cache)
        by_share = sorted(cache, key=lambda c: c["roofline"]["pct_of_bound"])
        for c in by_share[:3] + by_share[-1:]:
            self.assertTrue(any(c is p for p in picks))
        for mode in ("tf32", "fp32"):
            in_mode = [c for c in cache if c["mode"] == mode]
            for c in (max(in_mode, key=lambda c: c["tflops"]), min(in_mode, key=lambda c: c["tflops"])):
                self.assertTrue(any(c is p for p in picks))
        self.assertEqual(len(picks), len({id(p) for p in picks}), "no case twice")


if __name__ == "__main__":
    unittest.main()
