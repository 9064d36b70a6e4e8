#include "publish/initial_copy.h"

#include <fmt/format.h>

#include "core/error.h"
#include "kafka/consumer.h"

namespace binberg::publish {
namespace {

constexpr std::chrono::seconds kKafkaTimeout{30};

kafka::ConsumerOptions reader(const kafka::ClientOptions& kafka) {
  return kafka::ConsumerOptions{kafka, "binberg-source-copy-check", true};
}

std::string partition_name(const envelope::TopicPartition& partition) {
  return fmt::format("{} [{}]", partition.first, partition.second);
}

}  // namespace

nlohmann::json InitialCopy::to_json() const {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& [partition, offset] : start_offsets) {
    offsets.push_back({{"topic", partition.first}, {"partition", partition.second}, {"offset", offset}});
  }
  return {{"transaction", transaction_id},
          {"position", position.to_summary()},
          {"tables", tables},
          {"start_offsets", offsets}};
}

InitialCopy InitialCopy::from_json(const nlohmann::json& json) {
  InitialCopy copy;
  copy.transaction_id = json.at("transaction").get<std::string>();
  const auto position =
      capture::SourcePosition::from_summary(json.at("position").get<std::map<std::string, std::string>>());
  if (!position) fail("the initial copy {} records no position", copy.transaction_id);
  copy.position = *position;
  copy.tables = json.at("tables").get<std::vector<std::string>>();
  for (const auto& offset : json.at("start_offsets")) {
    copy.start_offsets[{offset.at("topic").get<std::string>(), offset.at("partition").get<std::int32_t>()}] =
        offset.at("offset").get<std::int64_t>();
  }
  return copy;
}

std::map<envelope::TopicPartition, std::int64_t> partition_ends(const kafka::ClientOptions& kafka,
                                                                const std::map<std::string, std::int32_t>& topics) {
  kafka::Consumer consumer = kafka::Consumer::create(reader(kafka));
  std::map<envelope::TopicPartition, std::int64_t> ends;
  for (const auto& [topic, partitions] : topics) {
    for (std::int32_t partition = 0; partition < partitions; ++partition) {
      ends[{topic, partition}] = consumer.watermarks(topic, partition, kKafkaTimeout).second;
    }
  }
  return ends;
}

namespace {

// Why COPY is not whole over TOPICS (empty: it is); RECORDS gets the copy's records by topic.
std::string why_not_whole(const kafka::ClientOptions& kafka, const InitialCopy& copy,
                          const std::map<std::string, std::int32_t>& topics,
                          std::map<std::string, std::int64_t>& records) {
  const auto ends = partition_ends(kafka, topics);
  std::map<envelope::TopicPartition, std::int64_t> written;  // records after each start offset
  std::optional<envelope::Footprint> announced;
  for (const auto& [partition, end] : ends) {
    const auto start = copy.start_offsets.find(partition);
    const std::int64_t from = start == copy.start_offsets.end() ? 0 : start->second;
    if (end < from)
      return fmt::format("{} ends at {}, before the copy's start {}", partition_name(partition), end, from);
    if (end == from) continue;
    written[partition] = end - from;
    records[partition.first] += end - from;
    // The copy is the first thing the source produces after its start offsets, so each partition's
    // last record is the copy's last there, carrying the footprint, when the copy ended.
    const auto last =
        kafka::read_range(reader(kafka), {partition.first, partition.second, end - 1}, end, kKafkaTimeout);
    if (last.empty())
      return fmt::format("{}: its last record at {} is not readable", partition_name(partition), end - 1);
    std::string transaction, footprint;
    for (const kafka::Header& header : last.back().headers) {
      if (header.name == envelope::kTransactionHeader) transaction = header.value;
      if (header.name == envelope::kTransactionEndHeader) footprint = header.value;
    }
    if (transaction != copy.transaction_id || footprint.empty()) {
      return fmt::format("{}: its last record (offset {}) does not end the copy {}", partition_name(partition), end - 1,
                         copy.transaction_id);
    }
    const envelope::Footprint parsed = envelope::parse_footprint(footprint);
    if (announced && *announced != parsed)
      return fmt::format("{} announces another footprint", partition_name(partition));
    announced = parsed;
  }
  if (!announced) return "no record of the copy is in Kafka";
  for (const auto& [partition, count] : *announced) {
    const auto it = written.find(partition);
    const std::int64_t held = it == written.end() ? 0 : it->second;
    if (held != count) {
      return fmt::format("{} holds {} records of the copy; its footprint announces {}", partition_name(partition), held,
                         count);
    }
  }
  for (const auto& [partition, held] : written) {
    if (!announced->contains(partition)) {
      return fmt::format("{} holds {} records the copy's footprint does not announce", partition_name(partition), held);
    }
  }
  return "";
}

}  // namespace

CopyInKafka find_copy(const kafka::ClientOptions& kafka, const InitialCopy& copy,
                      const std::map<std::string, std::int32_t>& topics) {
  CopyInKafka found;
  found.not_whole = why_not_whole(kafka, copy, topics, found.records);
  return found;
}

}  // namespace binberg::publish
