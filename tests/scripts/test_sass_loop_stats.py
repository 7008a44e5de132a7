"""scripts/dev/sass_loop_stats.py, no GPU: of a function's loops it studies the one with the most FFMAs, reads each
instruction's issue delay and reuse flags from its control bits, counts the FFMAs laid out before each global load,
names a second loop with as many FFMAs, and refuses in one line a file with no loop."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

DEV = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts", "dev")
sys.path.insert(0, DEV)
import sass_loop_stats  # noqa: E402


def control(stall, reuse=0):
    """The high word of an sm_70+ instruction with this issue delay (bits 105-108) and reuse flags (122-125)."""
    return (stall << 41) | (reuse << 58)


def sass(instructions):
    """cuobjdump -sass's two lines per instruction: address, text and low word, then the high word."""
    lines = ["\t\tFunction : k", "\t.headerflags @\"EF_CUDA_SM90\""]
    for addr, text, stall, reuse in instructions:
        lines.append(f"        /*{addr:04x}*/                   {text} ;   /* 0x000000000000000{addr % 10} */")
        lines.append(f"                                                      /* 0x{control(stall, reuse):016x} */")
    return "\n".join(lines) + "\n"


# A short loop with no FFMA (0x10-0x20), then the k loop (0x30-0x70): two FFMAs, one with a reuse flag.
CODE = [(0x00, "MOV R1, c[0x0][0x28]", 2, 0),
        (0x10, "IADD3 R2, R2, 0x1, RZ", 1, 0),
        (0x20, "@P0 BRA 0x10", 5, 0),
        (0x30, "LDS.128 R4, [R3]", 1, 0),
        (0x40, "FFMA R8, R4, R5, R8", 1, 0b0001),
        (0x50, "FFMA R9, R4, R6, R9", 2, 0),
        (0x60, "ISETP.GE.AND P1, PT, R2, R10, PT", 13, 0),
        (0x70, "@!P1 BRA 0x30", 5, 0),
        (0x80, "EXIT", 1, 0)]


class MainLoop(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_the_loop_with_the_most_ffmas_is_studied_with_its_delays_and_reuse_flags(self):
        path = self.write(sass(CODE))
        code = sass_loop_stats.parse(path)
        self.assertEqual(len(code), len(CODE))
        loop = sass_loop_stats.main_loop(code)
        self.assertEqual([x[0] for x in loop], [0x30, 0x40, 0x50, 0x60, 0x70])
        text = sass_loop_stats.describe(path, code, loop)
        self.assertIn("main loop 0x30-0x70: 5 instructions", text)
        self.assertIn("FFMA 2", text)
        self.assertIn("sum 22", text)  # 1 + 1 + 2 + 13 + 5
        self.assertIn("FFMA stall counts: {1: 1, 2: 1}; FFMA with a reuse flag 1 of 2", text)

    def test_global_loads_are_placed_by_the_ffmas_before_them_and_a_second_math_loop_is_named(self):
        # An inner loop whose loads ptxas sank behind its first FFMA (0x10-0x50), then a tested loop that loads first
        # (0x60-0xb0), as a kernel with an interior loop and an edge loop has.
        code = [(0x00, "MOV R1, c[0x0][0x28]", 1, 0),
                (0x10, "FFMA R8, R4, R5, R8", 1, 0),
                (0x20, "LDG.E.128.CONSTANT R12, desc[UR4][R2.64]", 4, 0),
                (0x30, "FFMA R9, R4, R6, R9", 1, 0),
                (0x40, "LDGSTS.E [R3], desc[UR4][R2.64]", 1, 0),
                (0x48, "LDGDEPBAR", 1, 0),
                (0x50, "@P0 BRA 0x10", 5, 0),
                (0x60, "LDG.E.CONSTANT R12, desc[UR4][R2.64]", 4, 0),
                (0x70, "LDG.E.CONSTANT R13, desc[UR4][R2.64+0x4]", 4, 0),
                (0x80, "FFMA R8, R4, R5, R8", 1, 0),
                (0x90, "FFMA R9, R4, R6, R9", 1, 0),
                (0xa0, "FFMA R10, R4, R7, R10", 1, 0),
                (0xb0, "@P1 BRA 0x60", 5, 0),
                (0xc0, "EXIT", 1, 0)]
        path = self.write(sass(code))
        parsed = sass_loop_stats.parse(path)
        loop = sass_loop_stats.main_loop(parsed)
        self.assertEqual(loop[0][0], 0x60)
        self.assertEqual(sass_loop_stats.loads_after_ffmas(loop), {0: 2})
        self.assertIn("global loads by the FFMAs before them: {0: 2} of 3 FFMAs",
                      sass_loop_stats.describe(path, parsed, loop))
        others = sass_loop_stats.other_loops(parsed, loop)
        self.assertEqual(len(others), 1)
        self.assertIn("also loop 0x10-0x50: 6 instructions, 2 FFMAs", others[0])
        self.assertIn("global loads by the FFMAs before them {1: 1, 2: 1}", others[0])

    def test_a_loop_with_under_half_the_ffmas_is_not_named_beside_the_main_one(self):
        code = sass_loop_stats.parse(self.write(sass(CODE)))  # its other loop, 0x10-0x20, holds no FFMA
        self.assertEqual(sass_loop_stats.other_loops(code, sass_loop_stats.main_loop(code)), [])

    def test_a_predicated_branch_and_a_forward_one_are_read_apart(self):
        forward_only = [(0x00, "@P0 BRA 0x20", 1, 0), (0x10, "FFMA R1, R2, R3, R1", 1, 0), (0x20, "EXIT", 1, 0)]
        code = sass_loop_stats.parse(self.write(sass(forward_only)))
        self.assertIsNone(sass_loop_stats.main_loop(code))

    def test_a_file_with_no_loop_or_none_at_all_is_refused_in_one_line(self):
        for path in (self.write("not sass\n"), "/nonexistent/ours.sass"):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as stop:
                sass_loop_stats.main([path])
            self.assertIn("sass_loop_stats.py: ", str(stop.exception))
            self.assertEqual(len(str(stop.exception).splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
