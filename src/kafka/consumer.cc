#include "kafka/consumer.h"

#include <librdkafka/rdkafkacpp.h>

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

Consumer Consumer::create(const ConsumerOptions& options) {
  if (options.group_id.empty()) throw ConfigError("kafka: a consumer needs a group id");
  auto conf = make_config(options.client,
                          {
                              {"group.id", options.group_id},
                              {"enable.auto.commit", "false"},
                              {"enable.auto.offset.store", "false"},
                              {"auto.offset.reset", "earliest"},
                              {"isolation.level", options.read_committed ? "read_committed" : "read_uncommitted"},
                              {"client.id", "binberg"},
                          });
  auto state = std::make_unique<State>();
  state->bootstrap = options.client.bootstrap_servers;
  std::string error;
  state->consumer.reset(RdKafka::KafkaConsumer::create(conf.get(), error));
  if (!state->consumer) fail("kafka {}: cannot create consumer: {}", state->bootstrap, error);
  return Consumer(std::move(state));
}

void Consumer::assign(const std::vector<PartitionStart>& partitions) {
  std::vector<RdKafka::TopicPartition*> list;
  for (const auto& p : partitions) list.push_back(RdKafka::TopicPartition::create(p.topic, p.partition, p.offset));
  auto code = state_->consumer->assign(list);
  RdKafka::TopicPartition::destroy(list);
  if (code != RdKafka::ERR_NO_ERROR) fail("kafka {}: assign failed: {}", state_->bootstrap, RdKafka::err2str(code));
}

std::optional<ConsumedRecord> Consumer::poll(std::chrono::milliseconds timeout) {
  std::unique_ptr<RdKafka::Message> message(state_->consumer->consume(static_cast<int>(timeout.count())));
  switch (message->err()) {
    case RdKafka::ERR_NO_ERROR:
      break;
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__PARTITION_EOF:
      return std::nullopt;
    default:
      fail("kafka {}: consume failed on {} [{}]: {}", state_->bootstrap, message->topic_name(), message->partition(),
           message->errstr());
  }
  ConsumedRecord record;
  record.topic = message->topic_name();
  record.partition = message->partition();
  record.offset = message->offset();
  record.timestamp_ms = message->timestamp().timestamp;
  if (const std::string* key = message->key()) record.key = *key;
  if (message->payload() != nullptr) {
    record.value = std::string(static_cast<const char*>(message->payload()), message->len());
  }
  if (RdKafka::Headers* headers = message->headers()) {
    for (const auto& header : headers->get_all()) {
      record.headers.push_back(
          Header{header.key(), std::string(static_cast<const char*>(header.value()), header.value_size())});
    }
  }
  return record;
}

}  // namespace binberg::kafka
