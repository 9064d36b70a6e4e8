#pragma once

// A Kafka producer that reports every delivery failure instead of dropping it. Modes:
// plain, idempotent (no duplicates from retries), transactional (records commit or abort together).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kafka/client_config.h"

namespace RdKafka {
class Producer;
}

namespace binberg::kafka {

enum class ProducerMode { kPlain, kIdempotent, kTransactional };

struct Header {
  std::string name;
  std::string value;
};

struct OutgoingRecord {
  std::string topic;
  std::optional<std::int32_t> partition;  // default: by key hash
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt: tombstone
  std::vector<Header> headers;
};

// A transactional producer another process with the same transactional.id fenced: that process
// took over, and this one must stop writing (retrying would fence the other in turn).
class ProducerFenced : public Error {
 public:
  using Error::Error;
};

// A record larger than the broker (the topic's max.message.bytes, the broker's message.max.bytes)
// or the client (message.max.bytes) accepts: sending it again the same way can never succeed.
class RecordTooLarge : public Error {
 public:
  using Error::Error;
};

class Producer {
 public:
  // TRANSACTIONAL_ID is required for kTransactional; init_transactions runs here.
  static Producer create(const ClientOptions& options, ProducerMode mode, const std::string& transactional_id = "");

  Producer(Producer&&) noexcept;
  Producer& operator=(Producer&&) noexcept;
  ~Producer();

  // Queues a record; throws Error if librdkafka refuses it (unknown topic, queue full after waiting;
  // RecordTooLarge when it is larger than the client sends).
  void send(const OutgoingRecord& record);
  // Waits until every queued record is acknowledged; throws Error naming the first failed
  // delivery (topic, partition, error), so nothing is lost silently (RecordTooLarge when the
  // broker refused it for its size).
  void flush(std::chrono::milliseconds timeout);

  // Asks the brokers where TOPICS' partitions live now. Without it the first records sent to a
  // topic wait for the client's next metadata refresh (about a second), and a Kafka transaction
  // that holds them cannot commit before.
  void learn_topics(const std::vector<std::string>& topics, std::chrono::milliseconds timeout);

  void begin_transaction();
  void commit_transaction();
  void abort_transaction();

  std::uint64_t delivered() const;

 private:
  struct State;
  explicit Producer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace binberg::kafka
