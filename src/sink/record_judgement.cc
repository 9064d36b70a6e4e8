#include "sink/record_judgement.h"

#include <fmt/format.h>

#include <charconv>

#include "capture/source_position.h"
#include "core/assert.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "envelope/change_envelope.h"
#include "registry/registry_client.h"
#include "sink/record_bytes.h"

namespace binberg::sink {
namespace {

std::optional<std::string> header(const Headers& headers, std::string_view name) {
  const auto it = headers.find(name);
  return it == headers.end() ? std::nullopt : std::optional(it->second);
}

// Runs PARSE on header NAME's value when the record has it (record_bytes.h: any failure is an
// Error naming the header).
template <typename Parse>
auto parse_header(const Headers& headers, std::string_view name, Parse&& parse)
    -> std::optional<decltype(parse(std::string()))> {
  const auto it = headers.find(name);
  if (it == headers.end()) return std::nullopt;
  return reading([&] { return fmt::format("header {}", name); }, [&] { return parse(it->second); });
}

// kPositionHeader: "<gtid> <file>:<pos>" (the GTID may be empty): the GTID and the position.
std::pair<std::string, mysql::BinlogPosition> parse_position(const std::string& text) {
  const auto space = text.rfind(' ');
  const std::string_view binlog = space == std::string::npos ? text : std::string_view(text).substr(space + 1);
  const auto position = parse_binlog_position(binlog);
  if (!position) fail("'{}' is not '<gtid> <file>:<pos>'", text);
  return {space == std::string::npos ? std::string() : text.substr(0, space), *position};
}

// A decimal count of milliseconds.
std::int64_t parse_timestamp_ms(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) fail("'{}' is not a timestamp in ms", text);
  return value;
}

// A schema change record's statement: it needs its transaction's headers, and its footprint must
// name its own partition (the sink applies it once every partition listed met it).
SchemaChangeRecord schema_change_of(const kafka::ConsumedRecord& record, const std::string& json,
                                    const RecordFacts& facts, const std::string& gtid) {
  if (facts.txn.id.empty() || !facts.txn.position || !facts.txn.footprint) {
    fail("a schema change record lacks its transaction, position or footprint header");
  }
  SchemaChangeRecord met;
  met.change = tables::PublishedSchemaChange::parse(json);
  for (const auto& [where, records] : *facts.txn.footprint) {
    if (where.first == record.topic) met.partitions.insert(Partition(where.second));
  }
  if (!met.partitions.contains(Partition(record.partition))) {
    fail("the schema change record's footprint does not name its own partition");
  }
  met.txn = facts.txn.id;
  met.position = *facts.txn.position;
  met.gtid = gtid;
  return met;
}

// The facts of RECORD's HEADERS; throws Error naming the header that does not parse.
RecordFacts read_facts(const kafka::ConsumedRecord& record, const Headers& headers) {
  RecordFacts facts;
  facts.partition = {record.topic, record.partition};
  facts.txn.id = header(headers, envelope::kTransactionHeader).value_or("");
  const auto position = parse_header(headers, envelope::kPositionHeader, parse_position);
  if (position) facts.txn.position = position->second;
  facts.txn.footprint = parse_header(headers, envelope::kTransactionEndHeader,
                                     [](const std::string& text) { return envelope::parse_footprint(text); });
  if (auto origin = parse_header(headers, kReplayOfHeader, RecordOrigin::parse)) {
    facts.replay_of = ReplayOf{std::move(*origin), parse_header(headers, kReplayOfTimestampHeader, parse_timestamp_ms)};
  }
  facts.key_change = parse_header(headers, envelope::kKeyChangeHeader, [](const std::string& text) {
                       if (text != "old" && text != "new") fail("'{}' is neither old nor new", text);
                       return text;
                     }).value_or("");
  facts.schema_change = parse_header(headers, envelope::kSchemaChangeHeader, [&](const std::string& json) {
    return schema_change_of(record, json, facts, position ? position->first : std::string());
  });
  return facts;
}

}  // namespace

RecordFacts RecordFacts::of(const ReadRecord& read) {
  const kafka::ConsumedRecord& record = read.record;
  try {
    return with_context([&] { return fmt::format("{} [{}] offset {}", record.topic, record.partition, record.offset); },
                        [&] { return read_facts(record, read.headers); });
  } catch (const Error& error) {  // reading() made every failure to parse a header an Error
    RecordFacts alone;
    alone.partition = {record.topic, record.partition};
    alone.malformed = error.what();
    return alone;
  }
}

Coordinates coordinates_of(const ChangeEvent& event, const std::string& key_change) {
  return Coordinates{mysql::BinlogPosition{event.source.file, event.source.end_pos}, event.source.row_index,
                     key_change == "new" ? 1 : 0};
}

std::variant<ChangeEvent, std::string> take_change(ReadRecord& read) {
  if (read.event) return std::move(*read.event);
  const kafka::ConsumedRecord& record = read.record;
  // The reader decodes every record at or past the offsets the tables need; those below are never judged.
  BINBERG_ASSERT(read.event_error != nullptr, "{} [{}] offset {}: handed over undecoded", record.topic,
                 record.partition, record.offset);
  try {
    std::rethrow_exception(read.event_error);
  } catch (const registry::RegistryError& error) {
    if (error.http_status() != 404) throw;  // the registry is unwell: retry, do not dead-letter
    return fmt::format("unknown schema id: {}", error.what());
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& error) {
    return std::string(error.what());
  }
}

std::optional<std::string> key_problem(const ReadRecord& read, const ChangeEvent& event) {
  if (event.schema->primary_key.empty()) return std::nullopt;
  if (!read.record.key) return "the record has no key";
  if (read.key) {
    if (*read.key != primary_key_of(event)) {
      if (failpoint::hit("sink.key_gate")) return std::nullopt;  // `corrupt`: let it through, a defect on purpose
      return "the record's key is not its row's key";
    }
    return std::nullopt;
  }
  BINBERG_ASSERT(read.key_error != nullptr, "{} [{}] offset {}: key not decoded", read.record.topic,
                 read.record.partition, read.record.offset);
  try {
    std::rethrow_exception(read.key_error);
  } catch (const registry::RegistryError& error) {
    if (error.http_status() != 404) throw;
    return fmt::format("the key's schema is unknown: {}", error.what());
  } catch (const Error& error) {
    return fmt::format("the key does not decode: {}", error.what());
  }
  return std::nullopt;
}

bool passed(const Progress& progress, const mysql::BinlogPosition& position) {
  return (progress.last_txn_position && capture::compare_binlog(position, *progress.last_txn_position) <= 0) ||
         (progress.last && capture::compare_binlog(position, progress.last->binlog) <= 0);
}

const char* to_string(ReplayVerdict verdict) {
  switch (verdict) {
    case ReplayVerdict::kApply:
      return "applied";
    case ReplayVerdict::kSuperseded:
      return "superseded";
    case ReplayVerdict::kDuplicate:
      return "duplicate";
  }
  BINBERG_UNREACHABLE("replay verdict {}", static_cast<int>(verdict));
}

ReplayVerdict judge_replay(const std::vector<HistoryRecord>& between, const ChangeEvent& event,
                           const RecordOrigin& origin) {
  const RowImage key = primary_key_of(event);
  const Coordinates at = coordinates_of(event, "");
  bool superseded = false;
  // The newest change the partition showed since the origin: a clean copy of the replayed change
  // (an at-least-once source producing it again) was applied only if nothing as new came first.
  std::optional<Coordinates> newest;
  for (const HistoryRecord& other : between) {
    if (const auto of = other.headers.find(kReplayOfHeader); of != other.headers.end()) {
      if (of->second == origin.to_string()) return ReplayVerdict::kDuplicate;
      continue;  // another dead letter's replay: older than the partition's changes around it
    }
    if (!other.change) continue;  // never applied: it does not hold the key
    const ChangeEvent& change = *other.change;
    const Coordinates coordinates =
        coordinates_of(change, header(other.headers, envelope::kKeyChangeHeader).value_or(""));
    if (change.event_id == event.event_id && (!newest || compare(*newest, at) < 0)) {
      return ReplayVerdict::kDuplicate;  // its clean copy was applied
    }
    if (primary_key_of(change) == key && compare(coordinates, at) > 0) superseded = true;
    if (!newest || compare(coordinates, *newest) > 0) newest = coordinates;
  }
  return superseded ? ReplayVerdict::kSuperseded : ReplayVerdict::kApply;
}

ReplayVerdict judge_replay_across(const std::vector<std::vector<HistoryRecord>>& partitions, const ChangeEvent& event,
                                  const RecordOrigin& origin) {
  ReplayVerdict verdict = ReplayVerdict::kApply;
  for (const std::vector<HistoryRecord>& partition : partitions) {
    switch (judge_replay(partition, event, origin)) {
      case ReplayVerdict::kDuplicate:
        return ReplayVerdict::kDuplicate;
      case ReplayVerdict::kSuperseded:
        verdict = ReplayVerdict::kSuperseded;
        break;
      case ReplayVerdict::kApply:
        break;
    }
  }
  return verdict;
}

}  // namespace binberg::sink
