#include "sink/kafka_ports.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "kafka/admin.h"
#include "kafka/group_membership.h"
#include "kafka/producer.h"
#include "sink/dead_letter_topics.h"
#include "sink/dead_letters.h"
#include "sink/kafka_sink.h"

namespace binberg::sink {
namespace {

constexpr std::chrono::minutes kFlushTimeout{10};

class KafkaInput final : public SinkInput {
 public:
  KafkaInput(const KafkaSinkOptions& options, DeadLetterTopics& diversion_topics)
      : options_(options),
        diversion_topics_(diversion_topics),
        // Reads start where the tables say, never where a reset would jump to: an offset retention
        // deleted (or a recreated topic lacks) is an error, which the next session's start names.
        consumer_(kafka::Consumer::create(
            kafka::ConsumerOptions{options.kafka, options.group_id, true, kafka::OffsetReset::kError})),
        decoder_(options.registry) {}

  std::int32_t partition_count(const std::string& topic) override {
    return kafka::partition_count(options_.kafka, topic);
  }
  PartitionBounds bounds(const std::string& topic, Partition partition) override {
    const auto [first, end] = consumer_.watermarks(topic, partition.value, std::chrono::seconds(30));
    return PartitionBounds{Offset(first), Offset(end)};
  }
  std::optional<Offset> known_first_offset(const std::string& topic, Partition partition) override {
    const auto first = consumer_.known_low_watermark(topic, partition.value);
    return first ? std::optional(Offset(*first)) : std::nullopt;
  }
  void assign(const std::vector<kafka::PartitionStart>& starts) override { consumer_.assign(starts); }
  void start_reading(const std::map<envelope::TopicPartition, std::int64_t>& skip_below) override {
    reader_.emplace(consumer_, options_.registry, skip_below, options_.queue_records);
  }
  std::optional<ReadItem> next(std::chrono::milliseconds timeout) override { return reader_->next(timeout); }
  std::size_t queued() const override { return reader_ ? reader_->queued() : 0; }
  std::optional<Offset> end_offset(const std::string& topic, Partition partition) override {
    const auto high = consumer_.high_watermark(topic, partition.value);
    return high ? std::optional(Offset(*high)) : std::nullopt;
  }
  // Never waits for the broker: with the broker gone, a synchronous commit held the sink for
  // librdkafka's request timeout (60 s) after it came back (the broker-restart drill).
  void report_offsets(const std::vector<kafka::PartitionStart>& offsets) override {
    consumer_.commit_in_background(offsets);
  }

  void prepare_diversions(const std::string& topic) override { diversion_topics_.prepare(topic); }

  // Each diverted record is sent and acknowledged on its own (they are rare): a record the broker
  // refuses for its size is then known to be this one, and is diverted truncated instead, so the
  // sink never retries one it can never divert.
  Diverted divert(const kafka::ConsumedRecord& record, std::string_view suffix, const std::string& reason) override {
    const std::string topic = record.topic + std::string(suffix);
    diversion_topics_.prepare(record.topic);  // done when the table was opened: cached
    Diverted how = Diverted::kWhole;
    try {
      send_diverted(
          kafka::OutgoingRecord{topic, std::nullopt, record.key, record.value, diverted_headers(record, reason)});
    } catch (const kafka::RecordTooLarge& error) {
      diverted_.reset();  // a refused record can leave an idempotent producer unable to go on: a new one
      send_diverted(truncated_diversion(record, topic, reason, error.what()));
      how = Diverted::kTruncated;
    }
    spdlog::warn("sink: {} [{}] offset {} -> {}{}: {}", record.topic, record.partition, record.offset, topic,
                 how == Diverted::kTruncated ? " (truncated)" : "", reason);
    return how;
  }
  void flush_diverted() override {
    if (diverted_) diverted_->flush(kFlushTimeout);
  }

  std::vector<HistoryRecord> read_between(const std::string& topic, Partition partition, Offset from,
                                          Offset to) override {
    const auto records =
        kafka::read_range(replay_reader(), {topic, partition.value, from.value}, to.value, std::chrono::minutes(5));
    std::vector<HistoryRecord> history;
    for (const kafka::ConsumedRecord& record : records) {
      HistoryRecord& entry = history.emplace_back(HistoryRecord{header_map(record), std::nullopt});
      if (!record.value) continue;
      try {
        entry.change = decoder_.change(*record.value);
      } catch (const registry::RegistryError& error) {
        if (error.http_status() != 404) throw;  // an outage: judge again later, never on partial knowledge
      } catch (const Error&) {
        // never applied: it does not hold the key
      }
    }
    return history;
  }
  Offset offset_at_time(const std::string& topic, Partition partition, std::int64_t timestamp_ms) override {
    kafka::Consumer consumer = kafka::Consumer::create(replay_reader());
    return Offset(consumer.offset_for_time(topic, partition.value, timestamp_ms, std::chrono::seconds(30)));
  }

 private:
  kafka::ConsumerOptions replay_reader() const {
    return kafka::ConsumerOptions{options_.kafka, options_.group_id + ".replay", true};
  }
  void send_diverted(const kafka::OutgoingRecord& record) {
    if (!diverted_) diverted_.emplace(kafka::Producer::create(options_.kafka, kafka::ProducerMode::kIdempotent));
    diverted_->send(record);
    diverted_->flush(kFlushTimeout);
  }

  const KafkaSinkOptions& options_;
  DeadLetterTopics& diversion_topics_;
  kafka::Consumer consumer_;
  std::optional<SinkReader> reader_;  // reads consumer_ (declared after it: stops first)
  std::optional<kafka::Producer> diverted_;
  RecordDecoder decoder_;  // for replays' judgement; the reader decodes the records read
};

class KafkaSlots final : public SlotSource {
 public:
  explicit KafkaSlots(kafka::GroupMembership membership) : membership_(std::move(membership)) {}
  bool poll() override { return membership_.poll(); }
  std::vector<std::int32_t> slots() const override { return {membership_.slots().begin(), membership_.slots().end()}; }

 private:
  kafka::GroupMembership membership_;
};

// Slot i is the i-th of the sorted topics: every sink of the group must read the same topics. The
// slots topic's partition count checks their number; its first record, the list the first sink of
// the group wrote there, checks the topics themselves.
void check_group_topics(const KafkaSinkOptions& options, const std::string& slots_topic) {
  const auto topics = static_cast<std::int32_t>(options.topics.size());
  kafka::create_topic(options.kafka, kafka::TopicSpec{slots_topic, topics, options.replication_factor, {}});
  if (const std::int32_t slots = kafka::partition_count(options.kafka, slots_topic); slots != topics) {
    throw ConfigError(
        fmt::format("sink: group {} shares {} topics ({} has {} partitions) but this sink reads {}: every "
                    "sink of a group must read the same topics",
                    options.group_id, slots, slots_topic, slots, topics));
  }
  const std::string list = nlohmann::json(options.topics).dump();  // sorted by KafkaSink
  const auto first_list = [&] {
    return kafka::read_range(kafka::ConsumerOptions{options.kafka, options.group_id + ".slots-check", true},
                             {slots_topic, 0, 0}, 1, std::chrono::seconds(30));
  };
  std::vector<kafka::ConsumedRecord> first = first_list();
  if (first.empty()) {  // the group's first sink; of two at once, the one written first counts
    auto producer = kafka::Producer::create(options.kafka, kafka::ProducerMode::kIdempotent);
    producer.send(kafka::OutgoingRecord{slots_topic, 0, std::string("topics"), list, {}});
    producer.flush(kFlushTimeout);
    first = first_list();
  }
  if (first.empty() || first.front().value != list) {
    throw ConfigError(fmt::format(
        "sink: group {} shares the topics {} (the first record of {}) but this sink reads {}: every sink of a "
        "group must read the same topics",
        options.group_id, first.empty() ? std::string("(unreadable)") : first.front().value.value_or(""), slots_topic,
        list));
  }
}

class KafkaEnvironment final : public SinkEnvironment {
 public:
  TimeSource& clock() override { return system_time(); }
  std::string process() override {
    char name[256] = {};
    const std::string host = ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : "unknown-host";
    return fmt::format("{}/{}", host, ::getpid());
  }
  std::unique_ptr<SinkInput> connect(const KafkaSinkOptions& options) override {
    if (!diversion_topics_) diversion_topics_.emplace(options.kafka, options.dead_letters);
    return std::make_unique<KafkaInput>(options, *diversion_topics_);
  }
  std::unique_ptr<SlotSource> join_group(const KafkaSinkOptions& options, const std::string& writer) override {
    const std::string slots_topic = options.group_id + ".slots";
    check_group_topics(options, slots_topic);
    auto membership = kafka::GroupMembership::join(kafka::GroupMembershipOptions{
        options.kafka, options.group_id + ".members", slots_topic, options.member_timeout, options.stall_timeout});
    spdlog::info("sink: {} joined group {} sharing {} topics", writer, options.group_id, options.topics.size());
    return std::make_unique<KafkaSlots>(std::move(membership));
  }

 private:
  std::optional<DeadLetterTopics> diversion_topics_;  // what it made ready outlives the sessions
};

}  // namespace

std::unique_ptr<SinkEnvironment> kafka_environment() { return std::make_unique<KafkaEnvironment>(); }

}  // namespace binberg::sink
