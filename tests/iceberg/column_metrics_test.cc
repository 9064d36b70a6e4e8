#include "iceberg/column_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "iceberg/single_value.h"

namespace binberg::iceberg {
namespace {

Schema one_column(TypePtr type) { return Schema(0, {NestedField{1, "c", false, std::move(type), std::nullopt}}); }

std::string text_bound(const std::map<std::int32_t, Bytes>& bounds) {
  const Bytes& bytes = bounds.at(1);
  return std::string(bytes.begin(), bytes.end());
}

TEST(ColumnMetricsTest, CountsNullsAndNansAndBoundsIgnoreBoth) {
  const Schema schema = one_column(double_type());
  const std::vector<Row> rows{{2.5}, {std::monostate{}}, {std::nan("")}, {-1.0}, {7.0}};
  const ColumnMetrics metrics = compute_column_metrics(schema, rows);
  EXPECT_EQ(metrics.value_counts.at(1), 5);
  EXPECT_EQ(metrics.null_value_counts.at(1), 1);
  EXPECT_EQ(metrics.nan_value_counts.at(1), 1);
  EXPECT_EQ(std::get<double>(from_single_value(*double_type(), metrics.lower_bounds.at(1), "lower")), -1.0);
  EXPECT_EQ(std::get<double>(from_single_value(*double_type(), metrics.upper_bounds.at(1), "upper")), 7.0);
}

TEST(ColumnMetricsTest, AllNullColumnHasCountsButNoBounds) {
  const ColumnMetrics metrics =
      compute_column_metrics(one_column(long_type()), std::vector<Row>{{std::monostate{}}, {std::monostate{}}});
  EXPECT_EQ(metrics.null_value_counts.at(1), 2);
  EXPECT_FALSE(metrics.lower_bounds.contains(1));
  EXPECT_FALSE(metrics.nan_value_counts.contains(1)) << "NaN counts exist for float and double columns only";
}

TEST(ColumnMetricsTest, StringBoundsAreTruncatedWithoutExcludingAnyValue) {
  const Schema schema = one_column(string_type());
  const std::vector<Row> rows{{std::string("abcdefgh")}, {std::string("abczzzzz")}};
  const ColumnMetrics metrics = compute_column_metrics(schema, rows, 4);
  EXPECT_EQ(text_bound(metrics.lower_bounds), "abcd");
  EXPECT_EQ(text_bound(metrics.upper_bounds), "abc{") << "prefix 'abcz' with its last code point incremented";
}

TEST(ColumnMetricsTest, UpperBoundCountsCharactersNotBytes) {
  // "é" is two bytes; a truncation to 2 characters keeps it whole and increments it to "ê".
  const ColumnMetrics metrics =
      compute_column_metrics(one_column(string_type()), std::vector<Row>{{std::string("aéxyz")}}, 2);
  EXPECT_EQ(text_bound(metrics.lower_bounds), "a\xc3\xa9");
  EXPECT_EQ(text_bound(metrics.upper_bounds), "a\xc3\xaa");
}

TEST(ColumnMetricsTest, BinaryUpperBoundIsOmittedWhenNoPrefixCanBeIncremented) {
  const ColumnMetrics metrics =
      compute_column_metrics(one_column(binary_type()), std::vector<Row>{{Bytes(6, 0xFF)}}, 4);
  EXPECT_EQ(metrics.lower_bounds.at(1), Bytes(4, 0xFF));
  EXPECT_FALSE(metrics.upper_bounds.contains(1));
}

TEST(ColumnMetricsTest, DecimalsCompareByValueAndStringsByUnsignedBytes) {
  const TypePtr decimal = decimal_type(10, 2);
  EXPECT_LT(compare_literals(*decimal, Decimal{-500}, Decimal{3}), 0);
  EXPECT_LT(compare_literals(*string_type(), std::string("z"), std::string("\xc3\xa9")), 0);
}

TEST(SingleValueTest, RoundTripsAndRejectsWrongLengths) {
  EXPECT_EQ(to_single_value(*long_type(), std::int64_t{1}), (Bytes{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(to_single_value(*decimal_type(9, 2), Decimal{-1}), (Bytes{0xFF}));
  EXPECT_EQ(std::get<Decimal>(from_single_value(*decimal_type(9, 2), Bytes{0xFF, 0x38}, "d")).unscaled, -200);
  EXPECT_THROW(from_single_value(*int_type(), Bytes{1, 2}, "int bound"), Error);
  EXPECT_THROW(to_single_value(*int_type(), std::monostate{}), Error);
}

}  // namespace
}  // namespace binberg::iceberg
