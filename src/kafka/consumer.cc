#include "kafka/consumer.h"

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <set>
#include <utility>

#include "core/error.h"

namespace binberg::kafka {

struct Consumer::State {
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::string bootstrap;
};

Consumer::Consumer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Consumer::Consumer(Consumer&&) noexcept = default;
Consumer& Consumer::operator=(Consumer&&) noexcept = default;
Consumer::~Consumer() {
  if (state_ && state_->consumer) state_->consumer->close();
}

namespace {

// Every consumer reports partition ends: its readers learn from them that they have caught up.
std::unique_ptr<RdKafka::KafkaConsumer> create_consumer(const ConsumerOptions& options) {
  if (options.group_id.empty()) throw ConfigError("kafka: a consumer needs a group id");
  auto conf = make_config(options.client,
                          {
                              {"group.id", options.group_id},
                              {"enable.auto.commit", "false"},
                              {"enable.auto.offset.store", "false"},
                              {"auto.offset.reset", options.offset_reset == OffsetReset::kError ? "error" : "earliest"},
                              {"isolation.level", options.read_committed ? "read_committed" : "read_uncommitted"},
                              {"enable.partition.eof", "true"},
                              {"client.id", "binberg"},
                          });
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), error));
  if (!consumer) fail("kafka {}: cannot create consumer: {}", options.client.bootstrap_servers, error);
  return consumer;
}

std::vector<RdKafka::TopicPartition*> partition_list(const std::vector<PartitionStart>& partitions) {
  std::vector<RdKafka::TopicPartition*> list;
  for (const auto& p : partitions) list.push_back(RdKafka::TopicPartition::create(p.topic, p.partition, p.offset));
  return list;
}

void assign_partitions(RdKafka::KafkaConsumer& consumer, const std::vector<PartitionStart>& partitions,
                       const std::string& bootstrap) {
  std::vector<RdKafka::TopicPartition*> list = partition_list(partitions);
  auto code = consumer.assign(list);
  RdKafka::TopicPartition::destroy(list);
  if (code != RdKafka::ERR_NO_ERROR) fail("kafka {}: assign failed: {}", bootstrap, RdKafka::err2str(code));
}

ConsumedRecord to_record(RdKafka::Message& message) {
  ConsumedRecord record;
  record.topic = message.topic_name();
  record.partition = message.partition();
  record.offset = message.offset();
  record.timestamp_ms = message.timestamp().timestamp;
  if (const std::string* key = message.key()) record.key = *key;
  if (message.payload() != nullptr) {
    record.value = std::string(static_cast<const char*>(message.payload()), message.len());
  }
  if (RdKafka::Headers* headers = message.headers()) {
    for (const auto& header : headers->get_all()) {
      record.headers.push_back(
          Header{header.key(), std::string(static_cast<const char*>(header.value()), header.value_size())});
    }
  }
  return record;
}

}  // namespace

Consumer Consumer::create(const ConsumerOptions& options) {
  auto state = std::make_unique<State>();
  state->bootstrap = options.client.bootstrap_servers;
  state->consumer = create_consumer(options);
  return Consumer(std::move(state));
}

void Consumer::assign(const std::vector<PartitionStart>& partitions) {
  assign_partitions(*state_->consumer, partitions, state_->bootstrap);
}

void Consumer::commit(const std::vector<PartitionStart>& offsets) {
  std::vector<RdKafka::TopicPartition*> list = partition_list(offsets);
  const auto code = state_->consumer->commitSync(list);
  std::string refused;
  for (const RdKafka::TopicPartition* p : list) {
    if (refused.empty() && p->err() != RdKafka::ERR_NO_ERROR) {
      refused = fmt::format("{} [{}]: {}", p->topic(), p->partition(), RdKafka::err2str(p->err()));
    }
  }
  RdKafka::TopicPartition::destroy(list);
  if (code != RdKafka::ERR_NO_ERROR)
    fail("kafka {}: offset commit failed: {}", state_->bootstrap, RdKafka::err2str(code));
  if (!refused.empty()) fail("kafka {}: offset commit refused for {}", state_->bootstrap, refused);
}

void Consumer::commit_in_background(const std::vector<PartitionStart>& offsets) {
  std::vector<RdKafka::TopicPartition*> list = partition_list(offsets);
  const auto code = state_->consumer->commitAsync(list);
  RdKafka::TopicPartition::destroy(list);
  if (code != RdKafka::ERR_NO_ERROR)
    fail("kafka {}: offset commit not sent: {}", state_->bootstrap, RdKafka::err2str(code));
}

std::vector<PartitionStart> Consumer::committed(const std::vector<PartitionStart>& partitions,
                                                std::chrono::milliseconds timeout) {
  std::vector<RdKafka::TopicPartition*> list = partition_list(partitions);
  const auto code = state_->consumer->committed(list, static_cast<int>(timeout.count()));
  std::vector<PartitionStart> result;
  for (const RdKafka::TopicPartition* p : list) result.push_back({p->topic(), p->partition(), p->offset()});
  RdKafka::TopicPartition::destroy(list);
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: cannot read committed offsets: {}", state_->bootstrap, RdKafka::err2str(code));
  }
  return result;
}

std::optional<std::int64_t> Consumer::high_watermark(const std::string& topic, std::int32_t partition) {
  std::int64_t low = 0, high = 0;
  if (state_->consumer->get_watermark_offsets(topic, partition, &low, &high) != RdKafka::ERR_NO_ERROR || high < 0) {
    return std::nullopt;
  }
  return high;
}

std::optional<std::int64_t> Consumer::known_low_watermark(const std::string& topic, std::int32_t partition) {
  std::int64_t low = 0, high = 0;
  if (state_->consumer->get_watermark_offsets(topic, partition, &low, &high) != RdKafka::ERR_NO_ERROR || low < 0) {
    return std::nullopt;
  }
  return low;
}

std::pair<std::int64_t, std::int64_t> Consumer::watermarks(const std::string& topic, std::int32_t partition,
                                                           std::chrono::milliseconds timeout) {
  std::int64_t low = 0, high = 0;
  const auto code =
      state_->consumer->query_watermark_offsets(topic, partition, &low, &high, static_cast<int>(timeout.count()));
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: cannot read the offsets of {} [{}]: {}", state_->bootstrap, topic, partition,
         RdKafka::err2str(code));
  }
  return {low, high};
}

std::int64_t Consumer::offset_for_time(const std::string& topic, std::int32_t partition, std::int64_t timestamp_ms,
                                       std::chrono::milliseconds timeout) {
  std::vector<RdKafka::TopicPartition*> list = partition_list({{topic, partition, timestamp_ms}});
  const auto code = state_->consumer->offsetsForTimes(list, static_cast<int>(timeout.count()));
  const RdKafka::ErrorCode found = code == RdKafka::ERR_NO_ERROR ? list.front()->err() : code;
  const std::int64_t offset = list.front()->offset();
  RdKafka::TopicPartition::destroy(list);
  if (found != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: cannot find the offset of {} [{}] at {} ms: {}", state_->bootstrap, topic, partition, timestamp_ms,
         RdKafka::err2str(found));
  }
  // -1: no record that late; the partition's end is where one would be.
  return offset >= 0 ? offset : watermarks(topic, partition, timeout).second;
}

std::optional<ConsumedRecord> Consumer::poll(std::chrono::milliseconds timeout) {
  Polled polled = poll_event(timeout);
  if (auto* record = std::get_if<ConsumedRecord>(&polled)) return std::move(*record);
  return std::nullopt;
}

Polled Consumer::poll_event(std::chrono::milliseconds timeout) {
  std::unique_ptr<RdKafka::Message> message(state_->consumer->consume(static_cast<int>(timeout.count())));
  switch (message->err()) {
    case RdKafka::ERR_NO_ERROR:
      return to_record(*message);
    case RdKafka::ERR__PARTITION_EOF:
      return PartitionEnd{message->topic_name(), message->partition(), message->offset()};
    case RdKafka::ERR__TIMED_OUT:
      return std::monostate{};
    default:
      fail("kafka {}: consume failed on {} [{}]: {}", state_->bootstrap, message->topic_name(), message->partition(),
           message->errstr());
  }
}

namespace {

// Every record of PARTITIONS from their start offsets up to their ends, or up to (not including)
// the offset UNTIL names for a partition where it names one.
std::vector<ConsumedRecord> read_partitions(const ConsumerOptions& options,
                                            const std::vector<PartitionStart>& partitions,
                                            const std::map<std::pair<std::string, std::int32_t>, std::int64_t>& until,
                                            std::chrono::milliseconds timeout) {
  const auto consumer = create_consumer(options);
  assign_partitions(*consumer, partitions, options.client.bootstrap_servers);
  std::set<std::pair<std::string, std::int32_t>> open;
  for (const auto& p : partitions) open.emplace(p.topic, p.partition);
  std::vector<ConsumedRecord> records;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!open.empty()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      consumer->close();
      fail("kafka {}: {} did not reach its end within {} ms", options.client.bootstrap_servers,
           open.begin()->first + " [" + std::to_string(open.begin()->second) + "]", timeout.count());
    }
    std::unique_ptr<RdKafka::Message> message(consumer->consume(100));
    switch (message->err()) {
      case RdKafka::ERR_NO_ERROR: {
        const std::pair<std::string, std::int32_t> partition{message->topic_name(), message->partition()};
        const auto stop = until.find(partition);
        if (stop == until.end() || message->offset() < stop->second) records.push_back(to_record(*message));
        if (stop != until.end() && message->offset() + 1 >= stop->second) open.erase(partition);
        break;
      }
      case RdKafka::ERR__PARTITION_EOF:
        open.erase({message->topic_name(), message->partition()});
        break;
      case RdKafka::ERR__TIMED_OUT:
        break;
      default: {
        const std::string error = message->errstr();
        consumer->close();
        fail("kafka {}: reading {} [{}] failed: {}", options.client.bootstrap_servers, message->topic_name(),
             message->partition(), error);
      }
    }
  }
  consumer->close();
  return records;
}

}  // namespace

std::vector<ConsumedRecord> read_to_end(const ConsumerOptions& options, const std::vector<PartitionStart>& partitions,
                                        std::chrono::milliseconds timeout) {
  return read_partitions(options, partitions, {}, timeout);
}

std::vector<ConsumedRecord> read_range(const ConsumerOptions& options, const PartitionStart& from, std::int64_t until,
                                       std::chrono::milliseconds timeout) {
  if (from.offset >= until) return {};
  return read_partitions(options, {from}, {{{from.topic, from.partition}, until}}, timeout);
}

}  // namespace binberg::kafka
