#include "mysql/gtid.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace binberg::mysql {
namespace {

TEST(GtidTest, ParsesAndPrints) {
  Gtid gtid = Gtid::parse("0-1-42");
  EXPECT_EQ(gtid, (Gtid{0, 1, 42}));
  EXPECT_EQ(gtid.to_string(), "0-1-42");
  EXPECT_EQ(Gtid::parse("4294967295-4294967295-18446744073709551615").sequence, 18446744073709551615ull);
}

TEST(GtidTest, RejectsMalformed) {
  for (const char* bad : {"", "0-1", "0-1-", "a-1-2", "0-1-2-3", "-1-2", "4294967296-1-2", "0- 1-2"}) {
    EXPECT_THROW(Gtid::parse(bad), ConfigError) << bad;
  }
}

TEST(GtidPositionTest, ParsesListSortedByDomain) {
  GtidPosition position = GtidPosition::parse("2-5-9, 0-1-42\n");
  EXPECT_EQ(position.to_string(), "0-1-42,2-5-9");
  EXPECT_EQ(GtidPosition::parse(position.to_string()), position);
  EXPECT_TRUE(GtidPosition::parse("").empty());
  EXPECT_THROW(GtidPosition::parse("0-1-2,0-1-3"), ConfigError);
}

TEST(GtidPositionTest, AdvanceOnlyMovesForward) {
  GtidPosition position = GtidPosition::parse("0-1-10");
  position.advance(Gtid{0, 1, 11});
  position.advance(Gtid{1, 1, 1});
  EXPECT_EQ(position.to_string(), "0-1-11,1-1-1");
  EXPECT_THROW(position.advance(Gtid{0, 1, 11}), Error);
  EXPECT_THROW(position.advance(Gtid{0, 2, 5}), Error);
  EXPECT_EQ(position.in_domain(0)->sequence, 11u);
}

TEST(GtidPositionTest, ContainsIsPerDomain) {
  GtidPosition position = GtidPosition::parse("0-1-10,3-1-4");
  EXPECT_TRUE(position.contains(Gtid{0, 1, 10}));
  EXPECT_TRUE(position.contains(Gtid{0, 2, 3}));
  EXPECT_FALSE(position.contains(Gtid{0, 1, 11}));
  EXPECT_FALSE(position.contains(Gtid{1, 1, 1}));
  EXPECT_FALSE(position.in_domain(1).has_value());
}

}  // namespace
}  // namespace binberg::mysql
