#include "profiler/shell_quote.hpp"

#include <gtest/gtest.h>

#include "profiler/process.hpp"

namespace gemmtune {
namespace {

TEST(ShellQuote, WordsOfPlainCharactersStayBare) {
  EXPECT_EQ(shell_quote("--nvtx"), "--nvtx");
  EXPECT_EQ(shell_quote("/usr/local/cuda/bin/ncu"), "/usr/local/cuda/bin/ncu");
  EXPECT_EQ(shell_quote("gpu__time_duration.sum,dram__bytes.sum"), "gpu__time_duration.sum,dram__bytes.sum");
  EXPECT_EQ(shell_quote("--capture-range=cudaProfilerApi"), "--capture-range=cudaProfilerApi");
}

TEST(ShellQuote, WordThatWouldReadAsAnAssignmentIsQuoted) {
  EXPECT_EQ(shell_quote("CUDA_VISIBLE_DEVICES=1"), "'CUDA_VISIBLE_DEVICES=1'");
  EXPECT_EQ(shell_quote("a=b"), "'a=b'");
}

TEST(ShellQuote, NvtxFilterWithPipesIsSingleQuoted) {
  EXPECT_EQ(shell_quote("gemmtune@fwd:1x1x1:nn:row:bias+gelu:tf32|lt|a1/"),
            "'gemmtune@fwd:1x1x1:nn:row:bias+gelu:tf32|lt|a1/'");
}

TEST(ShellQuote, EmbeddedSingleQuoteIsClosedEscapedAndReopened) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(ShellQuote, EmptyWordAndShellMetacharactersAreQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  for (const char* word : {"a b", "$HOME", "a;b", "*", "~", "x\"y", "back\\slash", "(x)", "a&b", "!x", "#c"})
    EXPECT_EQ(shell_quote(word).front(), '\'') << word;
}

// The proof that matters: sh reads the joined line back into exactly the words it was made from.
TEST(ShellQuote, JoinedLineReadsBackAsTheSameWordsInSh) {
  const std::vector<std::string> words = {"plain", "it's", "", "a b\tc", "$HOME `id` $(id)", "\"q\"", "back\\slash",
                                          "gemmtune@fwd:1x1x1:nn:row:none:tf32|lt|a1-t2/", "new\nline", "*"};
  const ProcessOutput out = capture_process({"/bin/sh", "-c", "printf '%s\\0' " + shell_join(words)});
  ASSERT_EQ(out.status, 0) << out.err;
  std::vector<std::string> read_back;
  std::string word;
  for (char c : out.out) {
    if (c == '\0') {
      read_back.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  EXPECT_EQ(read_back, words);
}

}  // namespace
}  // namespace gemmtune
