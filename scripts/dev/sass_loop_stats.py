#!/usr/bin/env python3
"""The main loop of a kernel's SASS (`cuobjdump -sass` of one function): the backward branch whose body holds the
most FFMAs, its opcodes, the issue delays (stall counts) the compiler wrote into each instruction's control bits, and
where its global loads sit among the FFMAs; then any other loop with half as many FFMAs or more. With one warp a
scheduler, the sum over the instructions a pass executes bounds that pass's cycles from below (a body with branches
holds paths a pass skips), and a load issued late in the tile waits out DRAM's latency in full.
Usage: sass_loop_stats.py SASS... (each file one function, as `cuobjdump -sass -fun NAME LIB` prints it)."""
import collections
import re
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/")
WORD = re.compile(r"/\* (0x[0-9a-f]+) \*/")


def parse(path):
    """(address, text, high word) per instruction: sm_70+ prints each as two 64-bit words on two lines."""
    with open(path) as f:
        lines = f.read().split("\n")
    out = []
    for i, line in enumerate(lines[:-1]):
        m = INSTRUCTION.search(line)
        high = WORD.search(lines[i + 1]) if m else None
        if m and high:
            out.append((int(m.group(1), 16), m.group(2).strip(), int(high.group(1), 16)))
    return out


def stall(high):
    return (high >> 41) & 0xF  # bits 105-108 of the instruction: cycles before the next issue


def reuse(high):
    return (high >> 58) & 0xF  # operand reuse-cache flags


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def is_ffma(instruction):
    return opcode(instruction[1]).startswith("FFMA")


def loops_of(code):
    """The body of each backward branch, in address order."""
    bodies = []
    for addr, text, _ in code:
        target = re.search(r"BRA[^0]*0x([0-9a-f]+)", text)
        start = int(target.group(1), 16) if target else addr
        if opcode(text).startswith("BRA") and start < addr:
            bodies.append([x for x in code if start <= x[0] <= addr])
    return bodies


def main_loop(code):
    """The loop to study: of the backward branches, the one whose body holds the most FFMAs; None without one."""
    return max(loops_of(code), key=lambda b: sum(map(is_ffma, b)), default=None)


def loads_after_ffmas(loop):
    """{FFMAs before it: global loads} over the body's loads (LDG, or LDGSTS straight to shared memory), as the body is
    laid out: 0 when issued before the tile's math, more where ptxas sank them among the FFMAs (a rotated loop starts
    mid-tile, so read the numbers against the body's FFMA count)."""
    count, out = 0, collections.Counter()
    for x in loop:
        if is_ffma(x):
            count += 1
        elif opcode(x[1]).split(".")[0] in ("LDG", "LDGSTS"):  # not LDGDEPBAR, cp.async's commit
            out[count] += 1
    return dict(sorted(out.items()))


def describe(path, code, loop):
    ffma = [x for x in loop if is_ffma(x)]
    ops = collections.Counter(opcode(x[1]).split(".")[0] for x in loop)
    return "\n".join([
        f"== {path}: {len(code)} instructions; main loop {loop[0][0]:#x}-{loop[-1][0]:#x}: {len(loop)} instructions",
        "  opcodes: " + ", ".join(f"{k} {v}" for k, v in ops.most_common(14)),
        f"  stall counts: {dict(sorted(collections.Counter(stall(x[2]) for x in loop).items()))}  sum "
        f"{sum(stall(x[2]) for x in loop)}",
        f"  FFMA stall counts: {dict(sorted(collections.Counter(stall(x[2]) for x in ffma).items()))}; FFMA with a "
        f"reuse flag {sum(1 for x in ffma if reuse(x[2]))} of {len(ffma)}",
        f"  global loads by the FFMAs before them: {loads_after_ffmas(loop)} of {len(ffma)} FFMAs"])


def other_loops(code, loop):
    """One line for each other loop holding at least half the main loop's FFMAs: a kernel that runs interior and edge
    tiles in loops of their own has two such."""
    most = sum(map(is_ffma, loop))
    lines = []
    for body in loops_of(code):
        ffmas = sum(map(is_ffma, body))
        if body[0][0] != loop[0][0] and 2 * ffmas >= most:  # another back edge to the main loop's start is itself
            lines.append(f"  also loop {body[0][0]:#x}-{body[-1][0]:#x}: {len(body)} instructions, {ffmas} FFMAs, "
                         f"stall sum {sum(stall(x[2]) for x in body)}, global loads by the FFMAs before them "
                         f"{loads_after_ffmas(body)}")
    return lines


def main(paths):
    for path in paths:
        try:
            code = parse(path)
        except OSError as e:
            sys.exit(f"sass_loop_stats.py: cannot read {path}: {e.strerror}")
        loop = main_loop(code)
        if loop is None:
            sys.exit(f"sass_loop_stats.py: {path}: no backward branch, so no loop (is it cuobjdump -sass output?)")
        print("\n".join([describe(path, code, loop)] + other_loops(code, loop)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
