#!/usr/bin/env python3
"""Draws `gemmtune report`'s data: reads DIR/report.json (written by the C++ side, which computes every number),
writes DIR/index.html (self-contained: plots inline as PNG) and each plot as PNG and SVG beside it.

Usage: report.py REPORT_JSON OUT_DIR [ACCURACY_JSON ...]
Each ACCURACY_JSON (written by `gemmtune accuracy`) adds a plot of error vs k per math mode.
Needs matplotlib (Debian/Ubuntu: apt-get install python3-matplotlib); exits 2 with that advice when it is missing.
"""
import base64
import html
import json
import os
import re
import sys

try:
    import matplotlib
    matplotlib.use("Agg")  # no display on CI machines or GPU hosts
    import matplotlib.pyplot as plt
except ImportError:
    sys.stderr.write("report.py: matplotlib is missing for %s: apt-get install python3-matplotlib "
                     "(or run gemmtune report --python PATH with a Python that has it)\n" % sys.executable)
    sys.exit(2)

MODE_COLORS = {"fp32": "#4e79a7", "tf32": "#f28e2b", "3xtf32": "#59a14f"}
BACKEND_HATCH = {"own": "", "lt": "//"}


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def case_label(p):
    """Shape plus whatever differs from the plain forward row-major NN GEMM without epilogue."""
    parts = [p["shape"]]
    if p["pass"] != "fwd":
        parts.append(p["pass"])
    if p["layout"] != "nn":
        parts.append(p["layout"])
    if p["out"] != "row":
        parts.append("out=" + p["out"])
    if p["epilogue"] != "none":
        parts.append(p["epilogue"])
    return "\n".join(parts)


def save(fig, out_dir, name, figures):
    """Writes name.png and name.svg, and keeps the PNG for inlining."""
    png = os.path.join(out_dir, name + ".png")
    fig.savefig(png, dpi=110, bbox_inches="tight")
    fig.savefig(os.path.join(out_dir, name + ".svg"), bbox_inches="tight")
    plt.close(fig)
    with open(png, "rb") as f:
        figures[name] = base64.b64encode(f.read()).decode("ascii")


def plot_tflops(device, out_dir, name, figures):
    """Best verified TFLOP/s of each backend and math mode, per problem, in the latest run."""
    run = device.get("latest_run")
    if not run:
        return False
    best = {}  # (label, backend, mode) -> TFLOP/s
    labels = []
    for m in run["measurements"]:
        if m["status"] != "ok":
            continue
        label = case_label(m)
        if label not in labels:
            labels.append(label)
        key = (label, m["backend"], m["mode"])
        best[key] = max(best.get(key, 0.0), m["tflops"])
    series = sorted({(b, mo) for (_, b, mo) in best}, key=lambda s: (s[1], s[0]))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels) * max(1, len(series)) / 2), 4.2))
    width = 0.8 / len(series)
    for i, (backend, mode) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(labels))]
        ys = [best.get((label, backend, mode), 0.0) for label in labels]
        ax.bar(xs, ys, width, color=MODE_COLORS.get(mode, "#999999"), hatch=BACKEND_HATCH.get(backend, "..."),
               edgecolor="black", linewidth=0.4, label="%s %s" % (backend, mode))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("TFLOP/s (best verified candidate)")
    ax.set_title("Throughput per problem, backend and math mode (run %d)" % run["id"])
    ax.legend(fontsize=8, ncol=min(3, len(series)))
    ax.grid(axis="y", alpha=0.3)
    save(fig, out_dir, name, figures)
    return True


def plot_speedup(device, out_dir, name, figures):
    """How much faster the tuned choice is than cuBLASLt's heuristic-first algo, per problem."""
    run = device.get("latest_run")
    speedups = run["speedups"] if run else []
    if not speedups:
        return False
    speedups = sorted(speedups, key=lambda s: s["speedup"])
    labels = [case_label(s).replace("\n", " ") + " " + s["mode"] for s in speedups]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(labels) + 1.2))
    colors = [MODE_COLORS.get(s["mode"], "#999999") for s in speedups]
    ax.barh(range(len(labels)), [s["speedup"] for s in speedups], color=colors, edgecolor="black", linewidth=0.4)
    for i, s in enumerate(speedups):
        ax.text(s["speedup"], i, "  %.2fx %s" % (s["speedup"], s["best_backend"]), va="center", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("heuristic-first time / tuned time")
    ax.set_title("Tuned vs cuBLASLt heuristic-first")
    ax.set_xlim(0, max(s["speedup"] for s in speedups) * 1.25)
    save(fig, out_dir, name, figures)
    return True


def roofline_label(c):
    return "%s %s: %.0f%%" % (case_label(c).replace("\n", " "), c["mode"], c["roofline"]["pct_of_bound"])


def roofline_picks(points):
    """The cases worth a label on the roofline, most telling first: the three farthest below their ceiling (what
    `gemmtune ncu --top` profiles), the one nearest its ceiling, then each math mode's fastest and slowest. Every case,
    labelled or not, is in the algo cache table."""
    by_share = sorted(points, key=lambda c: c["roofline"]["pct_of_bound"])
    picks = by_share[:3] + by_share[-1:]
    for mode in sorted({c["mode"] for c in points}):
        in_mode = [c for c in points if c["mode"] == mode]
        picks += [max(in_mode, key=lambda c: c["tflops"]), min(in_mode, key=lambda c: c["tflops"])]
    unique = []
    for c in picks:
        if all(c is not u for u in unique):
            unique.append(c)
    return unique


# Where a label may go, tried in order: beside its point, then further out on a leader line. Distances in points;
# the text is anchored on the side facing its point.
LABEL_DISTANCES = (5, 14, 26, 40, 58, 80, 105, 135)
LABEL_DIRECTIONS = ((1, 0), (1, -1), (1, 1), (-1, 0), (-1, -1), (-1, 1), (0, -1), (0, 1),
                    (2, -1), (2, 1), (-2, -1), (-2, 1), (1, -2), (1, 2), (-1, -2), (-1, 2))
LABEL_PAD_PX = 2
MARKER_RADIUS_PT = 4.5  # the ring around a labelled point (8 pt across) and its edge


def _crosses(box, start, end):
    """Whether the segment start-end (display pixels) passes through box (Liang-Barsky clipping)."""
    (x0, y0), (x1, y1) = start, end
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - box.x0), (dx, box.x1 - x0), (-dy, y0 - box.y0), (dy, box.y1 - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _annotate(ax, x, y, text, direction, distance, leader):
    dx, dy = direction
    scale = distance / (dx * dx + dy * dy) ** 0.5
    arrow = {"arrowstyle": "-", "color": "#555555", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3} if leader else None
    return ax.annotate(text, (x, y), xytext=(dx * scale, dy * scale), textcoords="offset points", fontsize=7,
                       ha="left" if dx > 0 else "right" if dx < 0 else "center",
                       va="bottom" if dy > 0 else "top" if dy < 0 else "center", arrowprops=arrow)


def place_labels(fig, ax, labels):
    """Annotates each (x, y, text) in order where its text overlaps no label placed before it, no marker, no plotted
    line (the ceilings) and no leader line, its leader line crosses no label and no point but those touching its own,
    and it stays inside the axes; a label with no such place is left out. Deterministic: the same data gives the same
    picture. Returns the boxes (display pixels) of the placed texts."""
    from matplotlib.transforms import Bbox
    fig.canvas.draw()  # fixes the layout, so the pixel positions measured here are the saved ones
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    r = MARKER_RADIUS_PT * fig.dpi / 72.0
    markers = [Bbox.from_bounds(px - r, py - r, 2 * r, 2 * r)
               for collection in ax.collections for px, py in ax.transData.transform(collection.get_offsets())]
    drawn = []
    for line in ax.lines:
        xy = ax.transData.transform(line.get_xydata())
        drawn += list(zip(xy[:-1], xy[1:]))
    boxes, leaders = [], []

    def fits(box, leader, own):
        """leader: None, or the (start, end) of the line to the point, which may cross the markers touching own."""
        return (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
                and not any(box.overlaps(b) for b in boxes + markers)
                and not any(_crosses(box, a, b) for a, b in leaders + drawn)
                and (leader is None or not any(_crosses(b, *leader) for b in boxes)
                     and not any(_crosses(m, *leader) for m in markers if not m.overlaps(own))))

    for x, y, text in labels:
        point = tuple(ax.transData.transform((x, y)))
        own = Bbox.from_bounds(point[0] - r, point[1] - r, 2 * r, 2 * r)
        spot = None
        for distance in LABEL_DISTANCES:
            leader = distance != LABEL_DISTANCES[0]
            for direction in LABEL_DIRECTIONS:
                trial = _annotate(ax, x, y, text, direction, distance, leader=False)
                box = trial.get_window_extent(renderer).padded(LABEL_PAD_PX)
                trial.remove()
                scale = distance * fig.dpi / 72.0 / (direction[0] ** 2 + direction[1] ** 2) ** 0.5
                start = (point[0] + direction[0] * scale, point[1] + direction[1] * scale)
                if fits(box, (start, point) if leader else None, own):
                    spot = (direction, distance, leader, box, start)
                    break
            if spot:
                break
        if spot is None:
            continue
        direction, distance, leader, box, start = spot
        _annotate(ax, x, y, text, direction, distance, leader)
        boxes.append(box)
        if leader:
            leaders.append((start, point))
    return boxes


def draw_roofline(device):
    """The algo cache on the GPU's nominal roofline: one ceiling per math mode, a few cases labelled. None where the
    GPU's peaks are unknown or no case has a roofline."""
    peaks = device.get("peaks")
    points = [c for c in device["cache"] if c.get("roofline")]
    if not peaks or not points:
        return None
    bw = peaks["dram_tbytes_per_s"]
    xs = [c["roofline"]["intensity"] for c in points]
    lo, hi = min(xs + [1.0]) / 2, max(xs + [1e3]) * 2
    grid = [lo * (hi / lo) ** (i / 200.0) for i in range(201)]
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    modes = sorted({c["mode"] for c in points})
    for mode in modes:
        peak = peaks["tflops"][mode]
        ax.plot(grid, [min(peak, x * bw) for x in grid], color=MODE_COLORS.get(mode, "#999999"), linewidth=1.2,
                label="%s ceiling (%.0f TFLOP/s, %.2f TB/s)" % (mode, peak, bw))
        for source, marker in (("analytic minimum", "o"), ("ncu dram__bytes.sum", "s")):
            pts = [c for c in points if c["mode"] == mode and c["roofline"]["bytes_source"] == source]
            if pts:
                ax.scatter([c["roofline"]["intensity"] for c in pts], [c["tflops"] for c in pts], marker=marker,
                           color=MODE_COLORS.get(mode, "#999999"), edgecolor="black", linewidth=0.5, zorder=3,
                           label="%s cases, bytes: %s" % (mode, source))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ys = [c["tflops"] for c in points]
    ax.set_ylim(min(ys) / 4, max(peaks["tflops"][m] for m in modes) * 3)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    # The title's lines are set before the labels are placed, so the layout they are measured in is the saved one.
    title = ax.set_title("Roofline, nominal %s peaks (datasheet, not measured)\n%d cases; labelled: the 3 farthest "
                         "below their ceiling, the nearest, each mode's fastest and slowest\n(%% of the ceiling at "
                         "that intensity; every case is in the algo cache table)" % (peaks["model"], len(points)),
                         fontsize=9)
    picks = roofline_picks(points)
    # A ring tells which point of a cluster a label names.
    ax.scatter([c["roofline"]["intensity"] for c in picks], [c["tflops"] for c in picks], s=64, facecolors="none",
               edgecolors="black", linewidths=0.9, zorder=4)
    placed = place_labels(fig, ax, [(c["roofline"]["intensity"], c["tflops"], roofline_label(c)) for c in picks])
    if len(placed) < len(picks):
        title.set_text(title.get_text().replace("table)", "table; %d had no free place)" % (len(picks) - len(placed))))
    return fig


def plot_roofline(device, out_dir, name, figures):
    fig = draw_roofline(device)
    if fig is None:
        return False
    save(fig, out_dir, name, figures)
    return True


def fmt(v, spec="%.1f"):
    return "&ndash;" if v is None or (isinstance(v, (int, float)) and v < 0) else spec % v


def ncu_table(device):
    if not device["ncu"]:
        return "<p>No ncu report imported for this GPU (<code>gemmtune ncu import REPORT --db FILE</code>).</p>"
    rows = []
    for c in device["ncu"]:
        ratio = c["ncu_over_sweep"]
        rows.append(
            "<tr class='case'><td colspan='2'><b>%s</b><br><code>%s</code></td><td>%s</td><td>%d</td>"
            "<td><b>%s</b></td><td>%s<br><small>%s</small></td><td><b>%s</b></td><td colspan='8'><small>%s</small></td></tr>"
            % (html.escape(c["problem_key"]), html.escape(c["candidate_id"]), html.escape(c["cache_control"]),
               c["profiled_kernels"], fmt(c["ncu_call_us"], "%.2f"), fmt(c["sweep_median_us"], "%.2f"),
               html.escape(c["sweep_source"]), fmt(ratio, "%.3f"), html.escape(c["report_path"])))
        for k in c["kernels"]:
            stalls = ", ".join("%s %.0f%%" % (s["reason"], s["pct"]) for s in k["top_stalls"]) or "&ndash;"
            rows.append(
                "<tr><td>%d</td><td class='kernel' title='%s'>%s</td><td></td><td></td><td>%s</td><td></td><td></td>"
                "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                % (k["launch_index"], html.escape(k["kernel_name"]), html.escape(k["kernel_name"][:60]),
                   fmt(k["duration_us"], "%.2f"), fmt(k["sm_throughput_pct"]), fmt(k["memory_throughput_pct"]),
                   fmt(k["achieved_occupancy_pct"]), fmt(k["registers_per_thread"], "%d"),
                   fmt(k["shared_mem_bytes"] / 1024.0 if k["shared_mem_bytes"] >= 0 else -1, "%.1f KiB"),
                   fmt(k["dram_bytes"] / 1e6 if k["dram_bytes"] >= 0 else -1, "%.2f MB"), fmt(k["l2_hit_rate_pct"]),
                   stalls))
    return ("<table><tr><th>call idx</th><th>case / kernel</th><th>cache ctl</th><th>kernels</th><th>ncu &micro;s/call"
            "</th><th>sweep median &micro;s</th><th>ncu / sweep</th><th>SM %%</th><th>mem %%</th><th>occupancy %%</th>"
            "<th>regs</th><th>smem/block</th><th>DRAM</th><th>L2 hit %%</th><th>top stalls</th></tr>%s</table>"
            "<p class='note'>ncu's gpu__time_duration of a kernel is about 1.2 &micro;s longer than CUPTI's record "
            "of the same kernel on the H100, whether the sweep runs its calls back to back or each alone on an idle "
            "GPU (256&sup3; tf32: 5.98 against 4.80 &micro;s either way). Under ncu the GPU also idles between "
            "replays, so with <code>--clock-control none</code> a short kernel may run below its boost clock (1.81 "
            "against 2.0 GHz was seen for a 1024&sup3; tf32 GEMM). Small kernels therefore come out slower under ncu; "
            "with <code>--cache-control all</code> they also start from cold caches.</p>"
            ) % "".join(rows)


def cache_table(device):
    rows = []
    for c in device["cache"]:
        r = c.get("roofline")
        rows.append("<tr><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                    % (html.escape(c["problem_key"]), html.escape(c["candidate_id"]), fmt(c["median_us"], "%.2f"),
                       fmt(c["tflops"]), html.escape(r["bound"]) if r else "&ndash;",
                       fmt(r["pct_of_bound"]) if r else "&ndash;"))
    return ("<table><tr><th>problem</th><th>cached candidate</th><th>median &micro;s</th><th>TFLOP/s</th>"
            "<th>bound</th><th>%% of bound</th></tr>%s</table>" % "".join(rows))


def plot_accuracy(acc, out_dir, name, figures):
    """Relative error vs fp64 against k, one panel per mode: our variants' worst and best per input distribution,
    cuBLASLt fp32 on every panel (the yardstick), cuBLASLt tf32 on the tf32 panel."""
    modes = [m for m in ("fp32", "tf32", "3xtf32") if any(r["mode"] == m for r in acc["records"])]
    if not modes:
        return False
    fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 4), squeeze=False)
    styles = {"uniform": "-", "wide": ":"}

    def err(r):
        return float("inf") if r["rel_err"] is None else r["rel_err"]

    def aligned(r):
        """The grid's own shape; records of files older than the unaligned points carry none."""
        return r.get("m", acc["m"]) == acc["m"] and r.get("n", acc["n"]) == acc["n"]

    def ours(r):
        return r["candidate"].startswith("own/") or r["candidate"].endswith("+pad")

    for ax, mode in zip(axes[0], modes):
        for dist, style in styles.items():
            own = [r for r in acc["records"] if r["mode"] == mode and r["dist"] == dist and ours(r) and aligned(r)]
            ks = sorted({r["k"] for r in own})
            if ks:
                worst = [max(err(r) for r in own if r["k"] == k) for k in ks]
                best = [min(err(r) for r in own if r["k"] == k) for k in ks]
                ax.plot(ks, worst, style, color=MODE_COLORS[mode], marker="o", label="own worst, " + dist)
                ax.plot(ks, best, style, color=MODE_COLORS[mode], alpha=0.4, label="own best, " + dist)
            # The points whose rows are not 16-byte aligned (staged variants, +pad): their worst, apart.
            odd = [r for r in acc["records"] if r["mode"] == mode and r["dist"] == dist and ours(r) and not aligned(r)]
            odd_ks = sorted({r["k"] for r in odd})
            if odd_ks:
                ax.plot(odd_ks, [max(err(r) for r in odd if r["k"] == k) for k in odd_ks], style,
                        color=MODE_COLORS[mode], marker="s", mfc="none", label="own worst, unaligned rows, " + dist)
            for lt_mode, color in (("fp32", "black"), ("tf32", "#999999")):
                if lt_mode == "tf32" and mode != "tf32":
                    continue
                lt = sorted((r["k"], err(r)) for r in acc["records"] if r["mode"] == lt_mode and r["dist"] == dist
                            and r["candidate"].startswith("lt/") and not ours(r) and aligned(r))
                if lt:
                    ax.plot([k for k, _ in lt], [e for _, e in lt], style, color=color, marker="x",
                            label="cuBLASLt %s, %s" % (lt_mode, dist))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("k (m = %d, n = %d)" % (acc["m"], acc["n"]))
        ax.set_ylabel("relative Frobenius error vs fp64")
        ax.set_title(mode)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Accuracy: %s" % acc["device"].get("gpu_name", "?"))
    save(fig, out_dir, name, figures)
    return True


def accuracy_sections(paths, out_dir, figures):
    sections = []
    for i, path in enumerate(paths):
        try:
            with open(path) as f:
                acc = json.load(f)
        except (OSError, ValueError) as e:
            sys.stderr.write("report.py: cannot read %s: %s\n" % (path, e))
            raise SystemExit(2)
        name = "accuracy-%s-%d" % (slug(acc["device"].get("gpu_name", "gpu")), i)
        if plot_accuracy(acc, out_dir, name, figures):
            sections.append("<section><h2>Accuracy vs fp64</h2><p class='note'>%s (seed %d)</p>"
                            "<img alt='accuracy' src='data:image/png;base64,%s'><p class='files'>"
                            "<a href='%s.png'>PNG</a> <a href='%s.svg'>SVG</a></p></section>"
                            % (html.escape(path), acc["seed"], figures[name], name, name))
    return sections


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: report.py REPORT_JSON OUT_DIR [ACCURACY_JSON ...]\n")
        return 2
    try:
        with open(argv[1]) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("report.py: cannot read %s: %s\n" % (argv[1], e))
        return 2
    out_dir = argv[2]
    os.makedirs(out_dir, exist_ok=True)
    figures = {}
    sections = []
    for device in data["devices"]:
        s = slug(device["gpu_name"])
        parts = ["<h2>%s</h2><p><code>%s</code></p>" % (html.escape(device["gpu_name"]),
                                                         html.escape(device["device_key"]))]
        run = device.get("latest_run")
        if run:
            parts.append("<p>Latest run %d, profile <b>%s</b>, %s &ndash; %s, gemmtune %s.</p>"
                         % (run["id"], html.escape(run["profile"]), html.escape(run["started_at"]),
                            html.escape(run["finished_at"] or "unfinished"), html.escape(run["gemmtune_version"])))
        for title, plot, name in (("Throughput", plot_tflops, "tflops-" + s),
                                  ("Tuned vs heuristic-first", plot_speedup, "speedup-" + s),
                                  ("Roofline", plot_roofline, "roofline-" + s)):
            if plot(device, out_dir, name, figures):
                parts.append("<h3>%s</h3><img alt='%s' src='data:image/png;base64,%s'><p class='files'>"
                             "<a href='%s.png'>PNG</a> <a href='%s.svg'>SVG</a></p>"
                             % (title, title, figures[name], name, name))
        parts.append("<h3>Algo cache</h3>" + cache_table(device))
        parts.append("<h3>Nsight Compute metrics</h3>" + ncu_table(device))
        sections.append("<section>%s</section>" % "".join(parts))
    sections += accuracy_sections(argv[3:], out_dir, figures)
    page = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>gemmtune report</title><style>
body{font-family:sans-serif;margin:2em;max-width:1400px;color:#222}
table{border-collapse:collapse;font-size:12px;margin:0.5em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}
th{background:#f0f0f0}td:first-child,td.kernel{text-align:left}tr.case{background:#fafafa}
td.kernel{font-family:monospace;font-size:11px}img{max-width:100%%;border:1px solid #eee}
.note,.files{font-size:12px;color:#555}code{font-size:11px}
</style></head><body><h1>gemmtune report</h1><p>db <code>%s</code>, gemmtune %s</p>%s</body></html>
""" % (html.escape(data["db"]), html.escape(data["gemmtune_version"]),
       "".join(sections) or "<p>The db holds no run and no cache entry.</p>")
    index = os.path.join(out_dir, "index.html")
    with open(index, "w") as f:
        f.write(page)
    print("wrote %s (%d plots)" % (index, len(figures)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
