// RebuildFrom: the forms `binberg sink --from` accepts, and the ones it refuses.

#include "sink/sink_rebuild.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace binberg::sink {
namespace {

using Kind = RebuildFrom::Kind;

TEST(RebuildFromTest, ParsesEachFormAndPrintsItBack) {
  EXPECT_EQ(RebuildFrom::parse("earliest").kind, Kind::kEarliest);
  const RebuildFrom offset = RebuildFrom::parse("offset:1234");
  EXPECT_EQ(offset.kind, Kind::kOffset);
  EXPECT_EQ(offset.value, 1234);
  EXPECT_EQ(offset.to_string(), "offset:1234");
  const RebuildFrom millis = RebuildFrom::parse("timestamp:1764892800123");
  EXPECT_EQ(millis.kind, Kind::kTimestamp);
  EXPECT_EQ(millis.value, 1764892800123);
  EXPECT_EQ(millis.to_string(), "timestamp:1764892800123");
}

TEST(RebuildFromTest, ReadsAUtcTimeAsMillisecondsSinceTheEpoch) {
  const RebuildFrom at = RebuildFrom::parse("timestamp:2026-12-05T00:00:00Z");
  EXPECT_EQ(at.kind, Kind::kTimestamp);
  EXPECT_EQ(at.value, 1796428800000);  // date -u -d 2026-12-05 +%s, times 1000
}

TEST(RebuildFromTest, RefusesWhatItCannotRead) {
  for (const std::string text :
       {"", "latest", "offset:", "offset:-1", "offset:12x", "timestamp:", "timestamp:-5", "timestamp:2026-12-05",
        "timestamp:2026-12-05T00:00:00", "timestamp:2026-12-05 00:00Z"}) {
    EXPECT_THROW(RebuildFrom::parse(text), ConfigError) << text;
  }
}

}  // namespace
}  // namespace binberg::sink
