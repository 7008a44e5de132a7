// The device-side dropout step counter: a training step captured once in a CUDA graph, with the counter advanced at
// its end (Runtime::advance_offset), draws a new mask on every replay, the one an eager step given that offset by value
// draws, in the forward and in the backward alike; for every kernel family and the cuBLASLt + epilogue kernel path.
#include "gemmtune/runtime.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "cuda/stream.hpp"
#include "kernels/epilogue.cuh"
#include "kernels/kernel_test_support.hpp"
#include "kernels/registry.hpp"
#include "lt/lt_gemm.hpp"
#include "lt/lt_handles.hpp"
#include "support/gpu_test.hpp"
#include "support/scratch_dir.hpp"

namespace gemmtune {
namespace {

using test::random_floats;
using test::to_device;
using test::to_host;

TEST(BackwardOperands, DefaultToTheDropoutOffsetByValue) {
  const BackwardOperands x;
  EXPECT_EQ(x.seed, 0u);
  EXPECT_EQ(x.offset, 0u);
  EXPECT_EQ(x.offset_ptr, nullptr);
}

TEST(AdvanceOffset, RefusesANullDropoutOffsetPointer) {
  EXPECT_THROW(Runtime::advance_offset(nullptr, 1, nullptr), InputError);
}

// Y = relu(A·I + bias)·mask/(1−p) with B the identity, A in [−1, 1) and the bias in [2, 3): Z is in [1, 4), so Y is 0
// exactly where the forward dropped an element, and with gY = 1 the backward's gZ = gA·I = 2·mask exactly (p = ½,
// whatever the GEMMs' mode or summation order) and gBias[c] = 2 × the kept count of column c. 1024² elements: the keep
// rate is checked over more than 10⁶.
constexpr std::int64_t kSide = 1024;
constexpr float kDropout = 0.5f;
constexpr std::uint64_t kSeed = 0x243f6a8885a308d3ull, kFirstOffset = 1000;
constexpr int kReplays = 3;

GemmProblem step_problem(MathMode mode) {
  GemmProblem p;
  p.m = p.n = p.k = kSide;
  p.epi.bias = true;
  p.epi.act = Activation::Relu;
  p.epi.save_z = true;
  p.epi.dropout_p = kDropout;
  p.mode = mode;
  return p;
}

struct StepOutputs {
  std::vector<float> y, z, ga, gbias;
};

struct Step {
  explicit Step(const GemmProblem& problem)
      : p(problem), A(to_device(random_floats(count(), 17))), B(count()),
        bias(to_device(random_floats(n(), 18, 2.f, 3.f))), Y(count()), Z(count()), gY(count()), gA(count()),
        gBias(n()), counter(1) {
    std::vector<float> identity(count(), 0.f);
    for (std::int64_t i = 0; i < kSide; ++i) identity[static_cast<std::size_t>(i * kSide + i)] = 1.f;
    GT_CUDA_CALL(cudaMemcpy(B.get(), identity.data(), B.bytes(), cudaMemcpyHostToDevice));
    const std::vector<float> ones(count(), 1.f);
    GT_CUDA_CALL(cudaMemcpy(gY.get(), ones.data(), gY.bytes(), cudaMemcpyHostToDevice));
    GT_CUDA_CALL(cudaDeviceSynchronize());  // the copies are done before a non-blocking stream reads them
  }

  // The device counter's value, set before any stream reads it.
  void set_counter(std::uint64_t value) {
    GT_CUDA_CALL(cudaMemcpy(counter.get(), &value, sizeof(value), cudaMemcpyHostToDevice));
    GT_CUDA_CALL(cudaDeviceSynchronize());
  }
  static std::size_t count() { return static_cast<std::size_t>(kSide * kSide); }
  static std::size_t n() { return static_cast<std::size_t>(kSide); }

  // The forward and backward of one layer: the offset by value, or (offset_ptr non-null) read from the device. The
  // value field then holds another offset, so a kernel that ignored the pointer would draw the wrong mask.
  void run(Runtime& rt, std::uint64_t offset, const std::uint64_t* offset_ptr, cudaStream_t s) const {
    GemmOperands x;
    x.A = A.get();
    x.B = B.get();
    x.bias = bias.get();
    x.Y = Y.get();
    x.Z = Z.get();
    x.seed = kSeed;
    x.offset = offset_ptr ? offset + 12345 : offset;
    x.offset_ptr = offset_ptr;
    rt.forward(p, x, s);
    BackwardOperands g;
    g.A = A.get();
    g.B = B.get();
    g.Z = Z.get();
    g.gY = gY.get();
    g.gA = gA.get();
    g.gBias = gBias.get();
    g.seed = kSeed;
    g.offset = x.offset;
    g.offset_ptr = offset_ptr;
    rt.backward(p, g, s);
  }

  void poison_outputs() {
    for (DeviceBuffer<float>* out : {&Y, &Z, &gA, &gBias}) test::poison(*out);
  }

  StepOutputs outputs(cudaStream_t s) const {
    GT_CUDA_CALL(cudaStreamSynchronize(s));
    return {to_host(Y.get(), count()), to_host(Z.get(), count()), to_host(gA.get(), count()),
            to_host(gBias.get(), n())};
  }

  GemmProblem p;
  DeviceBuffer<float> A, B, bias, Y, Z, gY, gA, gBias;
  DeviceBuffer<std::uint64_t> counter;
};

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// The forward's mask (read off Y) and the backward's (read off gA and gBias) against the mask of `offset` computed on
// the host; returns the forward's mask.
std::vector<bool> check_masks(const StepOutputs& o, std::uint64_t offset, const std::string& what) {
  std::vector<bool> keep(Step::count());
  std::vector<double> kept_per_column(Step::n(), 0.0);
  std::size_t forward_wrong = 0, backward_wrong = 0, bias_wrong = 0, kept = 0;
  for (std::int64_t r = 0; r < kSide; ++r)
    for (std::int64_t c = 0; c < kSide; ++c) {
      const auto i = static_cast<std::size_t>(r * kSide + c);
      const bool k = kernels::dropout_keep(kSeed, offset, i, kDropout);
      keep[i] = k;
      kept += k;
      kept_per_column[static_cast<std::size_t>(c)] += k;
      forward_wrong += (o.y[i] != 0.f) != k;
      backward_wrong += o.ga[i] != (k ? 2.f : 0.f);
    }
  EXPECT_EQ(forward_wrong, 0u) << what << ": forward elements whose mask is not that of offset " << offset;
  EXPECT_EQ(backward_wrong, 0u) << what << ": backward elements whose mask is not that of offset " << offset;
  for (std::size_t c = 0; c < Step::n(); ++c) bias_wrong += o.gbias[c] != static_cast<float>(2 * kept_per_column[c]);
  EXPECT_EQ(bias_wrong, 0u) << what << ": gBias columns whose sum is not twice the kept count of offset " << offset;
  const double n = static_cast<double>(Step::count()), rate = static_cast<double>(kept) / n;
  const double sigma = std::sqrt(kDropout * (1.0 - kDropout) / n);
  EXPECT_LE(std::fabs(rate - (1.0 - kDropout)), 4 * sigma) << what << ": keep rate " << rate;
  return keep;
}

// Eager steps at offsets kFirstOffset + i (value form) against replays 1..kReplays of one captured step whose device
// counter starts at kFirstOffset and is advanced by 1 at the end of the step.
void check_replays_draw_the_eager_masks(Runtime& rt, const GemmProblem& p, const std::string& label) {
  Step step(p);
  const CudaStream s;
  step.run(rt, kFirstOffset, nullptr, s.get());  // resolves every GEMM of the step outside the capture
  GT_CUDA_CALL(cudaStreamSynchronize(s.get()));

  step.set_counter(kFirstOffset);
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  step.run(rt, kFirstOffset, step.counter.get(), s.get());
  Runtime::advance_offset(step.counter.get(), 1, s.get());
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<StepOutputs> replays;
  for (int i = 0; i < kReplays; ++i) {
    step.poison_outputs();
    GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
    replays.push_back(step.outputs(s.get()));
  }
  GT_CUDA_CALL(cudaGraphExecDestroy(exec));
  GT_CUDA_CALL(cudaGraphDestroy(graph));
  std::uint64_t counter_after = 0;
  GT_CUDA_CALL(cudaMemcpy(&counter_after, step.counter.get(), sizeof(counter_after), cudaMemcpyDeviceToHost));
  EXPECT_EQ(counter_after, kFirstOffset + kReplays) << label;

  std::vector<std::vector<bool>> masks;
  for (int i = 0; i < kReplays; ++i) {
    const std::uint64_t offset = kFirstOffset + static_cast<std::uint64_t>(i);
    step.poison_outputs();
    step.run(rt, offset, nullptr, s.get());
    const StepOutputs eager = step.outputs(s.get());
    const std::string what = label + " replay " + std::to_string(i + 1);
    EXPECT_TRUE(same_bits(replays[static_cast<std::size_t>(i)].y, eager.y)) << what << ": Y differs from eager";
    EXPECT_TRUE(same_bits(replays[static_cast<std::size_t>(i)].z, eager.z)) << what << ": Z differs from eager";
    EXPECT_TRUE(same_bits(replays[static_cast<std::size_t>(i)].ga, eager.ga)) << what << ": gA differs from eager";
    EXPECT_TRUE(same_bits(replays[static_cast<std::size_t>(i)].gbias, eager.gbias)) << what << ": gBias differs";
    masks.push_back(check_masks(replays[static_cast<std::size_t>(i)], offset, what));
  }
  // Independent masks of p = ½ differ on half the elements: within 4σ of it, not merely somewhere.
  const double n = static_cast<double>(Step::count()), sigma = std::sqrt(0.25 / n);
  for (int i = 0; i < kReplays; ++i)
    for (int j = i + 1; j < kReplays; ++j) {
      std::size_t differ = 0;
      for (std::size_t e = 0; e < Step::count(); ++e)
        differ += masks[static_cast<std::size_t>(i)][e] != masks[static_cast<std::size_t>(j)][e];
      EXPECT_LE(std::fabs(static_cast<double>(differ) / n - 0.5), 4 * sigma)
          << label << ": replays " << i + 1 << " and " << j + 1 << " differ on " << differ << " elements";
    }
  std::printf("[ dropout  ] %s: %s; %d replays drew the eager masks of offsets %llu..%llu\n", label.c_str(),
              rt.candidate_id(p).c_str(), kReplays, static_cast<unsigned long long>(kFirstOffset),
              static_cast<unsigned long long>(kFirstOffset + kReplays - 1));
}

// A Runtime (heuristic defaults) with the forward pinned to `candidate_id`.
struct PinnedRuntime {
  PinnedRuntime(const GemmProblem& p, const std::string& candidate_id) {
    RuntimeOptions o;
    o.warnings = &warnings;
    rt.emplace(dir.path("none.db"), 0, o);
    rt->pin(p, candidate_id);
  }
  test::ScratchDir dir;
  std::ostringstream warnings;
  std::optional<Runtime> rt;
};

// The first variant of `family` that runs p on this GPU, unsplit and unclustered unless asked; "" when none does.
std::string own_variant(kernels::Family family, const GemmProblem& p, bool split, bool clustered) {
  for (const kernels::KernelVariant& v : kernels::kernel_registry())
    if (v.family == family && (v.slices > 1) == split && (v.tile.cluster > 1) == clustered &&
        v.device_unsupported_reason().empty() && v.unsupported_reason(p).empty())
      return "own/" + v.name;
  return "";
}

void check_own_family(kernels::Family family, MathMode mode, bool split, bool clustered) {
  const GemmProblem p = step_problem(mode);
  const std::string id = own_variant(family, p, split, clustered);
  if (id.empty())
    GT_SKIP_GPU_TEST() << "no " << kernels::to_string(family) << (split ? " split-k" : "")
                       << (clustered ? " clustered" : "") << " variant runs " << p.key() << " on this GPU";
  PinnedRuntime f(p, id);
  check_replays_draw_the_eager_masks(*f.rt, p, id);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsSimtFp32) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::SimtFp32, MathMode::Fp32, false, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsSimtFp32SplitK) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::SimtFp32, MathMode::Fp32, true, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsSimtFp32Clustered) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::SimtFp32, MathMode::Fp32, false, true);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsMmaTf32) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::MmaTf32, MathMode::Tf32, false, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsMmaTf32SplitK) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::MmaTf32, MathMode::Tf32, true, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsMma3xTf32) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::Mma3xTf32, MathMode::Tf32x3, false, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsWgmmaTf32) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::WgmmaTf32, MathMode::Tf32, false, false);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsWgmmaTf32Clustered) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::WgmmaTf32, MathMode::Tf32, false, true);
}

TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsWgmma3xTf32) {
  GT_REQUIRE_GPU();
  check_own_family(kernels::Family::Wgmma3xTf32, MathMode::Tf32x3, false, false);
}

// cuBLASLt has no dropout epilogue: its GEMM runs, then our epilogue kernel, which reads the counter.
TEST(DropoutOffsetGpu, ReplaysDrawANewMaskEachEqualToEagerStepsCublasLtAndTheEpilogueKernel) {
  GT_REQUIRE_GPU();
  for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
    const GemmProblem p = step_problem(mode);
    const LtHandle h = make_lt_handle();
    const LtGemm lt(h.get(), p);
    ASSERT_FALSE(lt.fused_epilogue()) << p.key();
    const std::vector<Candidate> first = lt.heuristic(1, std::size_t{64} << 20);
    ASSERT_FALSE(first.empty()) << p.key();
    PinnedRuntime f(p, first.front().id());
    check_replays_draw_the_eager_masks(*f.rt, p, first.front().id());
  }
}

// Whatever the runtime picks by itself, with the counter shared by two steps' worth of increments: the value form and
// the pointer form agree at every offset, also when the increment is not 1.
TEST(DropoutOffsetGpu, TheDefaultChoiceReplaysWithAnIncrementOtherThanOne) {
  GT_REQUIRE_GPU();
  const test::ScratchDir dir;
  RuntimeOptions o;
  std::ostringstream warnings;
  o.warnings = &warnings;
  Runtime rt(dir.path("none.db"), 0, o);
  const GemmProblem p = step_problem(MathMode::Tf32);
  Step step(p);
  const CudaStream s;
  step.run(rt, 0, nullptr, s.get());
  const std::uint64_t start = 7, increment = 1ull << 33;
  step.set_counter(start);
  cudaGraph_t graph = nullptr;
  GT_CUDA_CALL(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeGlobal));
  step.run(rt, 0, step.counter.get(), s.get());
  Runtime::advance_offset(step.counter.get(), increment, s.get());
  GT_CUDA_CALL(cudaStreamEndCapture(s.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  GT_CUDA_CALL(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 2; ++i) {
    step.poison_outputs();
    GT_CUDA_CALL(cudaGraphLaunch(exec, s.get()));
    const StepOutputs replay = step.outputs(s.get());
    check_masks(replay, start + static_cast<std::uint64_t>(i) * increment, "default replay " + std::to_string(i + 1));
  }
  GT_CUDA_CALL(cudaGraphExecDestroy(exec));
  GT_CUDA_CALL(cudaGraphDestroy(graph));
}

}  // namespace
}  // namespace gemmtune
