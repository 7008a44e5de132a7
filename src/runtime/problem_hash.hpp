// ProblemHash: hashes a GemmProblem field by field, so the runtime's hot-path lookup never builds the key string
// (formatting a key costs about a microsecond; hashing the fields, a few nanoseconds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "problem/gemm_problem.hpp"

namespace gemmtune::runtime {

struct ProblemHash {
  std::size_t operator()(const GemmProblem& p) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over 64-bit words, then a final avalanche
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    mix(static_cast<std::uint64_t>(p.m));
    mix(static_cast<std::uint64_t>(p.n));
    mix(static_cast<std::uint64_t>(p.k));
    const std::uint64_t flags = static_cast<std::uint64_t>(p.pass) | static_cast<std::uint64_t>(p.mode) << 4 |
                                static_cast<std::uint64_t>(p.epi.act) << 8 | std::uint64_t{p.trans_a} << 16 |
                                std::uint64_t{p.trans_b} << 17 |
                                std::uint64_t{p.out == OutputLayout::Transposed} << 18 | std::uint64_t{p.epi.bias} << 19 |
                                std::uint64_t{p.epi.save_z} << 20;
    mix(flags);
    // Equality ignores the slope unless the activation is leaky_relu, and compares floats by value (-0 == 0):
    // so must the hash.
    const float slope = p.epi.act == Activation::LeakyRelu && p.epi.leaky_slope != 0.f ? p.epi.leaky_slope : 0.f;
    const float dropout = p.epi.dropout_p != 0.f ? p.epi.dropout_p : 0.f;
    std::uint32_t slope_bits = 0, dropout_bits = 0;
    std::memcpy(&slope_bits, &slope, sizeof(slope_bits));
    std::memcpy(&dropout_bits, &dropout, sizeof(dropout_bits));
    mix(std::uint64_t{slope_bits} << 32 | dropout_bits);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace gemmtune::runtime
