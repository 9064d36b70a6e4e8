#include "kafka/partitioner.h"

#include <librdkafka/rdkafka.h>

#include "core/error.h"

namespace binberg::kafka {

std::int32_t partition_for_key(std::string_view key, std::int32_t partitions) {
  if (partitions <= 0) fail("kafka: {} partitions: a topic has at least one", partitions);
  // librdkafka's murmur2 partitioner is Java's; it reads neither the topic handle nor the opaques.
  return rd_kafka_msg_partitioner_murmur2(nullptr, key.data(), key.size(), partitions, nullptr, nullptr);
}

}  // namespace binberg::kafka
