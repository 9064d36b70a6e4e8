#include "envelope/transaction_footprint.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace binberg::envelope {
namespace {

TEST(TransactionFootprintTest, RoundTripsInTopicPartitionOrder) {
  const Footprint footprint = {{{"cdc.shop.orders", 2}, 3}, {{"cdc.shop.lines", 0}, 1}, {{"cdc.shop.orders", 0}, 7}};
  const std::string text = format_footprint(footprint);
  EXPECT_EQ(text, "cdc.shop.lines/0=1,cdc.shop.orders/0=7,cdc.shop.orders/2=3");
  EXPECT_EQ(parse_footprint(text), footprint);
}

TEST(TransactionFootprintTest, RefusesWhatIsNotAFootprint) {
  for (const char* bad : {"", "t/0", "t=3", "/0=1", "t/x=1", "t/0=0", "t/0=1,t/0=2", "t/0=1,", "t/0=-1"}) {
    EXPECT_THROW((void)parse_footprint(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace binberg::envelope
