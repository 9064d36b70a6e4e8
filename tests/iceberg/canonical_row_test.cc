// The canonical text reconciliation digests (iceberg/canonical_row.h): exact values, edge cases of
// each type, and the row encoding's framing.

#include <gtest/gtest.h>

#include "iceberg/canonical_row.h"

namespace binberg::iceberg {
namespace {

std::string decimal_text(int precision, int scale, Int128 unscaled) {
  return canonical_text(*decimal_type(precision, scale), Decimal{unscaled}).value();
}

TEST(CanonicalRowTest, DecimalsKeepEveryFractionDigit) {
  EXPECT_EQ(decimal_text(9, 2, -150), "-1.50");
  EXPECT_EQ(decimal_text(9, 2, 5), "0.05");
  EXPECT_EQ(decimal_text(9, 2, -5), "-0.05");
  EXPECT_EQ(decimal_text(9, 2, 0), "0.00");
  EXPECT_EQ(decimal_text(9, 0, -42), "-42");
  EXPECT_EQ(decimal_text(9, 3, 1000), "1.000");
  EXPECT_EQ(decimal_text(38, 37, 1), "0.0000000000000000000000000000000000001");
  // The widest decimal(38) values, whose unscaled form needs all of 128 bits' range.
  Int128 largest = 0;
  for (int i = 0; i < 38; ++i) largest = largest * 10 + 9;
  EXPECT_EQ(decimal_text(38, 10, largest), "9999999999999999999999999999.9999999999");
  EXPECT_EQ(decimal_text(38, 0, -largest), "-99999999999999999999999999999999999999");
}

TEST(CanonicalRowTest, ScalarsAndNulls) {
  EXPECT_EQ(canonical_text(*boolean_type(), Literal{true}), "true");
  EXPECT_EQ(canonical_text(*long_type(), Literal{std::int64_t{-7}}), "-7");
  EXPECT_EQ(canonical_text(*double_type(), Literal{1.0}), "3ff0000000000000");
  // Floats widen exactly, so 0.1f and 0.1 differ.
  EXPECT_EQ(canonical_text(*float_type(), Literal{0.1F}), "3fb99999a0000000");
  EXPECT_EQ(canonical_text(*binary_type(), Literal{Bytes{0x00, 0xAB}}), "00ab");
  EXPECT_EQ(canonical_text(*string_type(), Literal{std::monostate{}}), std::nullopt);
}

TEST(CanonicalRowTest, RowEncodingFramesEachValueByLength) {
  const Schema schema(0, {NestedField{1, "id", true, long_type(), {}}, NestedField{2, "name", false, string_type(), {}},
                          NestedField{3, "note", false, string_type(), {}}});
  EXPECT_EQ(canonical_row_encoding(schema, Row{std::int64_t{12}, std::string("a:b"), std::monostate{}}),
            "2:123:a:b-\n");
}

}  // namespace
}  // namespace binberg::iceberg
