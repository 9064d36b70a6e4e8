#pragma once

// Topic administration through librdkafka's Admin API (the C++ wrapper has none).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kafka/client_config.h"

namespace binberg::kafka {

struct TopicSpec {
  std::string name;
  std::int32_t partitions = 1;
  std::int16_t replication_factor = 1;
  std::map<std::string, std::string> configs;  // e.g. cleanup.policy=compact
};

enum class CreateResult { kCreated, kAlreadyExists };

// Creates TOPIC; an existing topic is not an error. Throws Error naming the topic otherwise.
CreateResult create_topic(const ClientOptions& options, const TopicSpec& topic,
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Deletes TOPIC with every record in it; a missing topic is not an error. Throws Error naming the
// topic otherwise. (Tests and drills: a topic deleted and made again under a running sink.)
void delete_topic(const ClientOptions& options, const std::string& topic,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Sets TOPIC's configs to CONFIGS (AlterConfigs: the topic's other dynamic configs go back to the
// broker's defaults). Throws Error naming the topic when the broker refuses.
void set_topic_configs(const ClientOptions& options, const std::string& topic,
                       const std::map<std::string, std::string>& configs,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30));

// The number of partitions TOPIC has; throws Error naming the topic when it does not exist.
std::int32_t partition_count(const ClientOptions& options, const std::string& topic,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30));
// The same, nullopt when TOPIC does not exist; throws Error when the broker does not answer.
std::optional<std::int32_t> partition_count_if_exists(const ClientOptions& options, const std::string& topic,
                                                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

// What the brokers say of a topic: its partitions, its replication factor (that of its first
// partition) and its configs as they apply (those set on it and the broker's defaults).
struct TopicDescription {
  std::int32_t partitions = 0;
  std::int16_t replication_factor = 0;
  std::map<std::string, std::string> configs;  // e.g. retention.ms=604800000
};

// TOPIC described; nullopt when it does not exist. Throws Error naming the topic when the brokers
// do not answer.
std::optional<TopicDescription> describe_topic(const ClientOptions& options, const std::string& topic,
                                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace binberg::kafka
