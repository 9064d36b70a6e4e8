#include "sink/dead_letter_topics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/canonical.h"
#include "core/error.h"
#include "kafka/admin.h"
#include "sink/dead_letters.h"

namespace binberg::sink {
namespace {

// What a truncated diversion keeps of the original key and headers: enough to find the record
// (its coordinates are in the origin header anyway), never enough to be too large in turn.
constexpr std::size_t kKeptBytes = 4096;

std::string retention_text(const std::string& retention_ms) {
  return retention_ms == "-1" ? "unlimited" : retention_ms + " ms";
}

}  // namespace

DeadLetterTopics::DeadLetterTopics(kafka::ClientOptions client, DeadLetterTopicOptions options)
    : client_(std::move(client)), options_(options) {
  if (options_.retention_ms != -1 && options_.retention_ms <= 0) {
    throw ConfigError(fmt::format("sink: dead-letter retention {} ms: -1 (unlimited) or a positive number of ms",
                                  options_.retention_ms));
  }
  if (options_.retention_ms != -1 && !options_.allow_finite_retention) {
    throw ConfigError(
        fmt::format("sink: [sink] dead_letter_retention_ms = {} would let dead letters age out; set "
                    "allow_finite_dead_letter_retention = true to accept that",
                    options_.retention_ms));
  }
}

void DeadLetterTopics::prepare(const std::string& topic) {
  if (ready_.contains(topic)) return;
  const auto table_topic = kafka::describe_topic(client_, topic);
  if (!table_topic) fail("kafka {}: topic {} does not exist", client_.bootstrap_servers, topic);
  const std::int16_t replication_factor = options_.replication_factor.value_or(table_topic->replication_factor);
  for (const std::string_view suffix : {kDeadLetterSuffix, kQuarantineSuffix}) {
    prepare_one(topic, topic + std::string(suffix), replication_factor);
  }
  ready_.insert(topic);
}

void DeadLetterTopics::prepare_one(const std::string& table_topic, const std::string& topic,
                                   std::int16_t replication_factor) {
  const kafka::TopicSpec spec{topic,
                              1,
                              replication_factor,
                              {{"retention.ms", std::to_string(options_.retention_ms)},
                               {"retention.bytes", "-1"},
                               {"cleanup.policy", "delete"}}};
  if (kafka::create_topic(client_, spec) == kafka::CreateResult::kCreated) {
    created_.push_back(topic);
    spdlog::info("sink: created {} for {} (replication factor {}, retention {})", topic, table_topic,
                 replication_factor, retention_text(std::to_string(options_.retention_ms)));
    return;
  }
  const auto existing = kafka::describe_topic(client_, topic);
  if (!existing) fail("kafka {}: topic {} exists and does not", client_.bootstrap_servers, topic);
  const auto config = [&](const std::string& name) {
    const auto found = existing->configs.find(name);
    return found == existing->configs.end() ? std::string("(unknown)") : found->second;
  };
  const std::string policy = config("cleanup.policy");
  if (policy.find("compact") != std::string::npos) {
    throw ConfigError(fmt::format(
        "sink: dead-letter topic {} has cleanup.policy = {}: compaction keeps one record per key, so diverted "
        "changes of one row of {} would replace each other. Make it cleanup.policy=delete (kafka-configs --alter "
        "--entity-type topics --entity-name {} --add-config cleanup.policy=delete)",
        topic, policy, table_topic, topic));
  }
  // Retention by time or by size: either ages the only copy of a diverted change out.
  std::vector<std::string> limits, kept_for;
  for (const auto& [name, unit] :
       {std::pair{"retention.ms", "ms"}, std::pair{"retention.bytes", "bytes a partition"}}) {
    const std::string value = config(name);
    if (value == "-1") continue;
    limits.push_back(fmt::format("{} = {}", name, value));
    kept_for.push_back(fmt::format("{} {}", value, unit));
  }
  if (limits.empty()) return;
  if (!options_.allow_finite_retention) {
    throw ConfigError(fmt::format(
        "sink: dead-letter topic {} has {}: the only copy of a diverted change of {} would age out. Make it "
        "unlimited (kafka-configs --alter --entity-type topics --entity-name {} --add-config "
        "retention.ms=-1,retention.bytes=-1) or set [sink] allow_finite_dead_letter_retention = true",
        topic, fmt::join(limits, " and "), table_topic, topic));
  }
  spdlog::warn("sink: dead-letter topic {} keeps records for {} only (allowed by allow_finite_dead_letter_retention)",
               topic, fmt::join(kept_for, " and "));
}

kafka::OutgoingRecord truncated_diversion(const kafka::ConsumedRecord& record, const std::string& topic,
                                          const std::string& reason, const std::string& too_large) {
  std::size_t header_bytes = 0;
  for (const kafka::Header& header : record.headers) header_bytes += header.name.size() + header.value.size();
  const bool keep_key = record.key && record.key->size() <= kKeptBytes;
  const bool keep_headers = header_bytes <= kKeptBytes;
  kafka::ConsumedRecord kept = record;
  if (!keep_headers) kept.headers.clear();
  const std::string why = fmt::format(
      "{} (diverted truncated: {} too large to divert whole: value of {} bytes dropped, its SHA-256 in {}{}{})", reason,
      too_large, record.value ? record.value->size() : 0, kOriginalSha256Header, keep_key ? "" : "; key dropped",
      keep_headers ? "" : "; original headers dropped");
  std::vector<kafka::Header> headers = diverted_headers(kept, why);
  headers.push_back({std::string(kOriginalSha256Header), sha256_hex(record.value.value_or(""))});
  return kafka::OutgoingRecord{topic, std::nullopt, keep_key ? record.key : std::nullopt, std::nullopt,
                               std::move(headers)};
}

}  // namespace binberg::sink
