// ScratchBudget's arithmetic (runtime/stream_scratch.hpp), no GPU: what fits the cap, what passes it and what the
// error says; no cap at all where the limit is 0.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "runtime/stream_scratch.hpp"

namespace gemmtune::runtime {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ScratchBudget, UpToTheLimitFitsAndOneByteMoreIsRefusedNamingTheOptionAndWhatAskedForIt) {
  const ScratchBudget budget(64 * kMiB);
  EXPECT_NO_THROW(budget.check(64 * kMiB, "a new stream's workspace"));
  try {
    budget.check(64 * kMiB + 1, "a padded candidate's copies");
    ADD_FAILURE() << "64 MiB + 1 byte fitted a 64 MiB budget";
  } catch (const MemoryBudgetError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a padded candidate's copies"), std::string::npos) << what;
    EXPECT_NE(what.find("RuntimeOptions::max_scratch_bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("64 MiB"), std::string::npos) << what;
  }
}

TEST(ScratchBudget, ALimitOfZeroIsNoCap) {
  const ScratchBudget budget(0);
  EXPECT_NO_THROW(budget.check(std::size_t{1} << 50, "anything"));
  EXPECT_EQ(budget.used(), 0u);
}

TEST(ScratchBudget, AMemoryBudgetErrorIsAnInputError) {
  const ScratchBudget budget(1);
  EXPECT_THROW(budget.check(2, "x"), InputError);
}

}  // namespace
}  // namespace gemmtune::runtime
