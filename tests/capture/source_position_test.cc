// SourcePosition: the position every snapshot records, its ordering and its summary form.

#include <gtest/gtest.h>

#include <compare>

#include "capture/source_position.h"
#include "core/error.h"

namespace binberg::capture {
namespace {

SourcePosition at(const std::string& file, std::uint64_t offset, const std::string& gtid = "") {
  return SourcePosition{mysql::BinlogPosition{file, offset}, mysql::GtidPosition::parse(gtid)};
}

TEST(SourcePositionTest, BinlogFilesOrderByNumberNotText) {
  using B = mysql::BinlogPosition;
  EXPECT_TRUE(std::is_lt(compare_binlog(B{"mysql-bin.000009", 900}, B{"mysql-bin.000010", 4})));
  // A rotated name with more digits than the zero padding still orders after.
  EXPECT_TRUE(std::is_lt(compare_binlog(B{"mysql-bin.999999", 4}, B{"mysql-bin.1000000", 4})));
  EXPECT_TRUE(std::is_eq(compare_binlog(B{"mysql-bin.000003", 77}, B{"mysql-bin.000003", 77})));
  EXPECT_TRUE(std::is_gt(compare_binlog(B{"mysql-bin.000003", 78}, B{"mysql-bin.000003", 77})));
}

TEST(SourcePositionTest, ContainsTransactionsEndingAtOrBeforeIt) {
  const SourcePosition position = at("mysql-bin.000002", 500);
  EXPECT_TRUE(position.contains("mysql-bin.000002", 500));
  EXPECT_TRUE(position.contains("mysql-bin.000002", 499));
  EXPECT_TRUE(position.contains("mysql-bin.000001", 100000));
  EXPECT_FALSE(position.contains("mysql-bin.000002", 501));
  EXPECT_FALSE(position.contains("mysql-bin.000003", 4));
}

TEST(SourcePositionTest, SummaryRoundTrip) {
  const SourcePosition position = at("mysql-bin.000012", 1234, "0-1-57,1-2-3");
  const auto summary = position.to_summary();
  EXPECT_EQ(summary.at(tables::kBinlogFileProperty), "mysql-bin.000012");
  EXPECT_EQ(summary.at(tables::kBinlogPosProperty), "1234");
  const auto back = SourcePosition::from_summary(summary);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->binlog.file, "mysql-bin.000012");
  EXPECT_EQ(back->binlog.offset, 1234U);
  EXPECT_EQ(back->gtid, position.gtid);
  EXPECT_EQ(back->to_string(), "mysql-bin.000012:1234 (gtid 0-1-57,1-2-3)");
}

TEST(SourcePositionTest, SummaryWithoutPositionIsATableNotYetWritten) {
  EXPECT_FALSE(SourcePosition::from_summary({{"operation", "append"}}).has_value());
}

TEST(SourcePositionTest, MalformedSummariesNameTheProperty) {
  auto message = [](const std::map<std::string, std::string>& summary) {
    try {
      SourcePosition::from_summary(summary);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{tables::kBinlogFileProperty, "mysql-bin.000001"}}).find(tables::kBinlogPosProperty),
            std::string::npos);
  EXPECT_NE(
      message({{tables::kBinlogFileProperty, "mysql-bin.000001"}, {tables::kBinlogPosProperty, "12x"}}).find("'12x'"),
      std::string::npos);
  EXPECT_NE(message({{tables::kBinlogFileProperty, "mysql-bin.000001"}, {tables::kBinlogPosProperty, "-1"}})
                .find("not an offset"),
            std::string::npos);
}

}  // namespace
}  // namespace binberg::capture
