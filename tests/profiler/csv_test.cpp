#include "profiler/csv.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace gemmtune {
namespace {

TEST(Csv, QuotedFieldsKeepCommasDoubledQuotesAndNewlines) {
  const auto rows = parse_csv("\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n\"x\",\"\",\"z\"\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (CsvRow{"a,b", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(rows[1], (CsvRow{"x", "", "z"}));
}

TEST(Csv, UnquotedFieldsCrLfRowsAndAMissingFinalNewline) {
  const auto rows = parse_csv("1,2,3\r\n4,,6");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (CsvRow{"1", "2", "3"}));
  EXPECT_EQ(rows[1], (CsvRow{"4", "", "6"}));
}

TEST(Csv, UnterminatedQuoteOrStrayQuoteIsInputError) {
  EXPECT_THROW(parse_csv("\"open,1\n2,3\n"), InputError);
  EXPECT_THROW(parse_csv("ab\"c,1\n"), InputError);
}

}  // namespace
}  // namespace gemmtune
