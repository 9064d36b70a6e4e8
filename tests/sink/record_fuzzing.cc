#include "record_fuzzing.h"

#include <cstdint>
#include <variant>

#include "core/assert.h"
#include "sample_records.h"
#include "sink/dead_letters.h"
#include "sink/ownership.h"
#include "sink/record_judgement.h"
#include "sink/session_state.h"
#include "sink/sink_reader.h"

namespace binberg::sink::fuzzing {
namespace {

constexpr std::int32_t kPartitions = 4;

void put(std::string& out, std::string_view bytes) {
  const auto size = static_cast<std::uint16_t>(std::min<std::size_t>(bytes.size(), 0xffff));
  out += static_cast<char>(size & 0xff);
  out += static_cast<char>(size >> 8);
  out.append(bytes.substr(0, size));
}

// The next length-prefixed part of INPUT, cut short at its end.
std::string take(std::string_view& input) {
  if (input.size() < 2) {
    input = {};
    return {};
  }
  const std::size_t size =
      static_cast<std::uint8_t>(input[0]) | (static_cast<std::size_t>(static_cast<std::uint8_t>(input[1])) << 8);
  input.remove_prefix(2);
  std::string part(input.substr(0, size));
  input.remove_prefix(part.size());
  return part;
}

// The session the record meets: one table of samples::kTopic, every partition open at offset 0.
SessionState session() {
  SessionState state("fuzz", SessionMode::kSink);
  TableState& table = state.add_table(samples::kTopic);
  table.partitions = kPartitions;
  for (std::int32_t partition = 0; partition < kPartitions; ++partition) table.progress_of(Partition(partition));
  return state;
}

// What the session does with a record whose headers parsed, short of I/O (sink_session.cc handle).
void judge(SessionState& state, ReadRecord& read, const RecordFacts& facts, const Ownership& ownership) {
  TableState& table = state.table(read.record.topic);
  const Route route = state.route(table, read, facts, Arrival::kRead, ownership);
  if (route == Route::kMalformed) {
    BINBERG_ASSERT(facts.malformed.has_value(), "routed as malformed without a reason");
    return state.advance(table, read.record);
  }
  BINBERG_ASSERT(!facts.malformed.has_value(), "a malformed record routed as {}", static_cast<int>(route));
  if (route == Route::kSchemaChange) {
    BINBERG_ASSERT(facts.schema_change->partitions.contains(Partition(read.record.partition)),
                   "a schema change whose footprint misses its partition was accepted");
    return state.advance(table, read.record);
  }
  if (route != Route::kChange) return;
  std::variant<ChangeEvent, std::string> change = take_change(read);
  if (const auto* event = std::get_if<ChangeEvent>(&change)) {
    BINBERG_ASSERT(event->schema != nullptr, "a change without its table's shape");
    const ChangeAction action = state.judge_change(table, facts, *event);
    if (action.kind == ChangeAction::Kind::kApply) {
      (void)key_problem(read, *event);
      state.applied(table, *event);
    }
  } else {
    BINBERG_ASSERT(!std::get<std::string>(change).empty(), "a dead letter without a reason");
  }
  if (!facts.txn.id.empty()) state.count(table, facts);
  state.advance(table, read.record);
}

}  // namespace

std::string encode(const kafka::ConsumedRecord& record) {
  std::string out(1, static_cast<char>((record.key ? 1 : 0) | (record.value ? 2 : 0) | ((record.partition & 3) << 2)));
  put(out, record.key.value_or(""));
  put(out, record.value.value_or(""));
  for (const kafka::Header& header : record.headers) {
    put(out, header.name);
    put(out, header.value);
  }
  return out;
}

kafka::ConsumedRecord decode(std::string_view input) {
  kafka::ConsumedRecord record;
  record.topic = samples::kTopic;
  record.offset = 7;
  if (input.empty()) return record;
  const auto flags = static_cast<std::uint8_t>(input[0]);
  input.remove_prefix(1);
  record.partition = (flags >> 2) & 3;
  std::string key = take(input), value = take(input);
  if ((flags & 1) != 0) record.key = std::move(key);
  if ((flags & 2) != 0) record.value = std::move(value);
  while (!input.empty()) {
    std::string name = take(input);
    record.headers.push_back({std::move(name), take(input)});
  }
  return record;
}

void handle(std::string_view input) {
  static RecordDecoder decoder(samples::schema_by_id);  // caches schemas, as the reader's does
  static const Ownership ownership({samples::kTopic}, "fuzz", Scaling::kAlone);
  ReadRecord read = decode_record(decode(input), decoder, Decoding::kDecode);
  const RecordFacts facts = RecordFacts::of(read);
  if (facts.malformed) {
    BINBERG_ASSERT(facts.txn.id.empty() && !facts.schema_change && !facts.replay_of,
                   "a malformed record must stand alone");
  }
  SessionState state = session();
  judge(state, read, facts, ownership);
}

}  // namespace binberg::sink::fuzzing
