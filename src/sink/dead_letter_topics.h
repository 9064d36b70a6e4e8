#pragma once

// The dead-letter and quarantine topics of the table topics a sink writes. A diverted record is
// the only copy of its change binberg keeps, so its topic must be at least as strong as the table
// topic it came from: created once per table topic (when the sink opens the table, not per record)
// with the table topic's replication factor and no time limit on retention; an existing one with a
// finite retention is refused unless the operator allows it ([sink] dead_letter_* keys,
// docs/kafka-sink.md "Dead letters").

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"

namespace binberg::sink {

struct DeadLetterTopicOptions {
  std::optional<std::int16_t> replication_factor;  // none: the table topic's
  std::int64_t retention_ms = -1;                  // -1: kept for ever
  bool allow_finite_retention = false;             // existing topics (and retention_ms) may age records out
};

class DeadLetterTopics {
 public:
  DeadLetterTopics(kafka::ClientOptions client, DeadLetterTopicOptions options);

  // Makes TOPIC's `.dlq` and `.quarantine` topics ready, once per process (cached): creates a
  // missing one as configured, checks an existing one. Throws ConfigError naming a topic whose
  // retention is finite (unless allowed), Error when the brokers do not answer.
  void prepare(const std::string& topic);
  // Topics this object created, in order (for the log and the tests).
  const std::vector<std::string>& created() const { return created_; }

 private:
  void prepare_one(const std::string& table_topic, const std::string& topic, std::int16_t replication_factor);

  const kafka::ClientOptions client_;
  const DeadLetterTopicOptions options_;
  std::set<std::string> ready_;  // table topics
  std::vector<std::string> created_;
};

// Header of a diverted record whose original was too large to divert whole: the SHA-256 (hex) of
// the original value ("" for a tombstone), which the truncated record no longer holds.
inline constexpr std::string_view kOriginalSha256Header = "binberg.original_sha256";

// The record that stands for RECORD (diverted for REASON) when the whole one is larger than the
// dead-letter topic accepts (TOO_LARGE: the producer's error): the value dropped, the key and the
// original headers kept only while small; the error (saying what was dropped and why), the origin
// headers and kOriginalSha256Header added.
kafka::OutgoingRecord truncated_diversion(const kafka::ConsumedRecord& record, const std::string& topic,
                                          const std::string& reason, const std::string& too_large);

}  // namespace binberg::sink
