"""The Philox4x32-10 that the GPU tests build dropout masks from (gpu_support.py), against Random123's known-answer
vectors, and the mask built from it: the independent reference must itself be right for its check of the kernels'
masks to mean anything. No GPU."""
import unittest

from gpu_support import dropout_keep_mask, philox4x32_10


class PhiloxReferenceTest(unittest.TestCase):
    def test_matches_random123_known_answer_vectors(self):
        cases = [
            ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
            ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
            ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
             (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
        ]
        for counter, key, expected in cases:
            with self.subTest(counter=counter, key=key):
                self.assertEqual(philox4x32_10(counter, key), expected)

    def test_mask_drops_about_p_and_depends_on_seed_offset_and_the_high_words(self):
        seed, offset, rows, cols, p = (1 << 40) + 42, (1 << 36) + 5, 60, 50, 0.3
        mask = dropout_keep_mask(seed, offset, rows, cols, p)
        self.assertEqual((len(mask), {len(row) for row in mask}), (rows, {cols}))
        kept = sum(map(sum, mask)) / (rows * cols)
        self.assertAlmostEqual(kept, 1 - p, delta=0.03)
        for other in (dropout_keep_mask(seed ^ (1 << 40), offset, rows, cols, p),
                      dropout_keep_mask(seed, offset ^ (1 << 36), rows, cols, p)):
            differ = sum(a != b for ra, rb in zip(mask, other) for a, b in zip(ra, rb)) / (rows * cols)
            self.assertGreater(differ, 0.2)
        self.assertEqual(dropout_keep_mask(seed, offset, rows, cols, p), mask)

    def test_p_zero_keeps_everything_and_p_one_nothing(self):
        self.assertTrue(all(map(all, dropout_keep_mask(3, 4, 20, 30, 0.0))))
        self.assertFalse(any(map(any, dropout_keep_mask(3, 4, 20, 30, 1.0))))


if __name__ == "__main__":
    unittest.main()
