#pragma once

// The partition of a keyed record as Kafka's Java client chooses it (murmur2 of the key bytes,
// sign bit cleared, modulo the partition count), so binberg's records of a key land where any
// other producer's would, and binberg knows each record's partition before producing it.

#include <cstdint>
#include <string_view>

namespace binberg::kafka {

// PARTITIONS must be positive.
std::int32_t partition_for_key(std::string_view key, std::int32_t partitions);

}  // namespace binberg::kafka
