#include "kafka/producer.h"

#include <librdkafka/rdkafkacpp.h>

#include <mutex>

#include "core/error.h"
#include "core/failpoint.h"

namespace binberg::kafka {
namespace {

class DeliveryTracker : public RdKafka::DeliveryReportCb {
 public:
  void dr_cb(RdKafka::Message& message) override {
    std::lock_guard lock(mutex_);
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++delivered_;
    } else if (first_error_.empty()) {
      first_error_ =
          fmt::format("delivery to {} [{}] failed: {}", message.topic_name(), message.partition(), message.errstr());
      first_code_ = message.err();
    }
  }
  // The first failed delivery since the last call (empty: none), and its error code.
  std::pair<std::string, RdKafka::ErrorCode> take_error() {
    std::lock_guard lock(mutex_);
    return {std::exchange(first_error_, std::string()), std::exchange(first_code_, RdKafka::ERR_NO_ERROR)};
  }
  std::uint64_t delivered() const {
    std::lock_guard lock(mutex_);
    return delivered_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t delivered_ = 0;
  std::string first_error_;
  RdKafka::ErrorCode first_code_ = RdKafka::ERR_NO_ERROR;
};

[[noreturn]] void fail_transaction(const char* step, const RdKafka::Error& error) {
  if (error.code() == RdKafka::ERR__FENCED || error.code() == RdKafka::ERR_PRODUCER_FENCED ||
      error.code() == RdKafka::ERR_INVALID_PRODUCER_EPOCH) {
    throw ProducerFenced(
        fmt::format("kafka: {} failed: {}: another producer with this transactional.id took over", step, error.str()));
  }
  fail("kafka: {} failed: {}{}{}", step, error.str(), error.is_fatal() ? " (fatal: recreate the producer)" : "",
       error.txn_requires_abort() ? " (abort required)" : "");
}

void check_transaction(const char* step, RdKafka::Error* raw) {
  std::unique_ptr<RdKafka::Error> error(raw);
  if (error) fail_transaction(step, *error);
}

}  // namespace

struct Producer::State {
  DeliveryTracker tracker;
  std::unique_ptr<RdKafka::Producer> producer;
  bool transactional = false;
};

Producer::Producer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Producer::Producer(Producer&&) noexcept = default;
Producer& Producer::operator=(Producer&&) noexcept = default;
Producer::~Producer() {
  if (state_ && state_->producer) state_->producer->flush(5000);
}

Producer Producer::create(const ClientOptions& options, ProducerMode mode, const std::string& transactional_id) {
  std::map<std::string, std::string> defaults = {{"client.id", "binberg"}, {"linger.ms", "5"}};
  if (mode != ProducerMode::kPlain) {
    defaults["enable.idempotence"] = "true";
  }
  if (mode == ProducerMode::kTransactional) {
    if (transactional_id.empty()) throw ConfigError("kafka: a transactional producer needs a transactional.id");
    defaults["transactional.id"] = transactional_id;
  }
  auto conf = make_config(options, defaults);
  auto state = std::make_unique<State>();
  std::string error;
  if (conf->set("dr_cb", &state->tracker, error) != RdKafka::Conf::CONF_OK) fail("kafka: {}", error);
  state->producer.reset(RdKafka::Producer::create(conf.get(), error));
  if (!state->producer) fail("kafka {}: cannot create producer: {}", options.bootstrap_servers, error);
  if (mode == ProducerMode::kTransactional) {
    state->transactional = true;
    check_transaction("init_transactions", state->producer->init_transactions(30000));
  }
  return Producer(std::move(state));
}

void Producer::send(const OutgoingRecord& record) {
  RdKafka::Headers* headers = nullptr;
  if (!record.headers.empty()) {
    headers = RdKafka::Headers::create();
    for (const auto& header : record.headers) headers->add(header.name, header.value);
  }
  const std::int32_t partition = record.partition.value_or(RdKafka::Topic::PARTITION_UA);
  for (;;) {
    auto code = state_->producer->produce(
        record.topic, partition, RdKafka::Producer::RK_MSG_COPY,
        record.value ? const_cast<char*>(record.value->data()) : nullptr, record.value ? record.value->size() : 0,
        record.key ? record.key->data() : nullptr, record.key ? record.key->size() : 0, 0, headers, nullptr);
    if (code == RdKafka::ERR_NO_ERROR) return;  // the producer owns the headers now
    if (code == RdKafka::ERR__QUEUE_FULL) {
      state_->producer->poll(100);  // backpressure: wait for deliveries to free the queue
      continue;
    }
    delete headers;
    const std::string message = fmt::format("kafka: cannot produce to {}: {}", record.topic, RdKafka::err2str(code));
    if (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE) throw RecordTooLarge(message);
    throw Error(message);
  }
}

void Producer::flush(std::chrono::milliseconds timeout) {
  auto code = state_->producer->flush(static_cast<int>(timeout.count()));
  if (auto [error, error_code] = state_->tracker.take_error(); !error.empty()) {
    if (error_code == RdKafka::ERR_MSG_SIZE_TOO_LARGE) throw RecordTooLarge("kafka: " + error);
    fail("kafka: {}", error);
  }
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka: {} records still unacknowledged after {} ms: {}", state_->producer->outq_len(), timeout.count(),
         RdKafka::err2str(code));
  }
}

void Producer::learn_topics(const std::vector<std::string>& topics, std::chrono::milliseconds timeout) {
  for (const std::string& name : topics) {
    std::string error;
    std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(state_->producer.get(), name, nullptr, error));
    if (!topic) fail("kafka: topic {}: {}", name, error);
    RdKafka::Metadata* raw = nullptr;
    const auto code = state_->producer->metadata(false, topic.get(), &raw, static_cast<int>(timeout.count()));
    std::unique_ptr<RdKafka::Metadata> metadata(raw);
    if (code != RdKafka::ERR_NO_ERROR) fail("kafka: metadata of topic {}: {}", name, RdKafka::err2str(code));
  }
}

void Producer::begin_transaction() { check_transaction("begin_transaction", state_->producer->begin_transaction()); }

void Producer::commit_transaction() {
  failpoint::hit("kafka.before_commit_transaction");
  // -1: wait as long as the transaction needs; a timed-out commit leaves its outcome unknown.
  check_transaction("commit_transaction", state_->producer->commit_transaction(-1));
  if (auto [error, error_code] = state_->tracker.take_error(); !error.empty()) {
    if (error_code == RdKafka::ERR_MSG_SIZE_TOO_LARGE) throw RecordTooLarge("kafka: " + error);
    fail("kafka: {}", error);
  }
}

void Producer::abort_transaction() { check_transaction("abort_transaction", state_->producer->abort_transaction(-1)); }

std::uint64_t Producer::delivered() const { return state_->tracker.delivered(); }

}  // namespace binberg::kafka
