#include "kafka/partitioner.h"

#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <string>

#include "core/error.h"

namespace binberg::kafka {
namespace {

// Kafka's own murmur2 vectors (UtilsTest.testMurmur2 of the Java client): with INT32_MAX
// partitions the partition is the hash with its sign bit cleared, modulo INT32_MAX.
TEST(PartitionerTest, MatchesTheJavaClientsMurmur2) {
  const std::map<std::string, std::int32_t> java = {
      {"21", -973932308},
      {"foobar", -790332482},
      {"a-little-bit-long-string", -985981536},
      {"a-little-bit-longer-string", -1486304829},
      {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
      {"abc", 479470107},
  };
  for (const auto& [key, hash] : java) {
    const auto positive = static_cast<std::int32_t>(static_cast<std::uint32_t>(hash) & 0x7fffffffu);
    EXPECT_EQ(partition_for_key(key, INT32_MAX), positive % INT32_MAX) << key;
    EXPECT_EQ(partition_for_key(key, 6), positive % 6) << key;
  }
  EXPECT_THROW((void)partition_for_key("k", 0), Error);
}

}  // namespace
}  // namespace binberg::kafka
