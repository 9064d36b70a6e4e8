#pragma once

// How a sink session starts (invariants 1, 5 and 8 of kafka_sink.h): it finds the tables the sink
// made before, reads each one's offsets, newest change and writer epoch from its current snapshot,
// claims it or finds itself fenced out of it (ownership.h), seeds a rebuild, and seeks every
// partition to the offsets the tables need, stopping a table whose start would leave a gap.

#include <map>
#include <string>

#include "iceberg/catalog.h"
#include "sink/session_state.h"
#include "sink/sink_ports.h"
#include "sink/sink_session.h"
#include "sink/table_output.h"

namespace binberg::sink {

enum class Opening {
  kOpened,
  kSeeded,   // a rebuild copied its seed: the first commit is due before anything is read
  kStandby,  // scale-out: no table to write until the group gives this sink a topic
};

// Stops TABLE at GAP in PARTITION (TableStopped: the sink goes on with its other tables and never
// commits this one past the gap); a rebuild is refused instead (ConfigError).
[[noreturn]] void stop_at_gap(const TableState& table, Partition partition, const OffsetGap& gap);

class SessionOpening {
 public:
  SessionOpening(const SinkContext& sink, SessionState& state, std::map<std::string, TableOutput>& outputs);

  // The tables this sink made before, by the topic they record (a rebuild finds only its own).
  std::map<std::string, iceberg::TableIdentifier> existing_tables();
  // Opens the tables of every topic this sink writes (EXISTING: existing_tables()). Throws
  // ConfigError when a lone sink has nothing left to write (every table stopped or claimed).
  Opening open_tables(const std::map<std::string, iceberg::TableIdentifier>& existing, SinkInput& input);
  // Seeks every partition to the offsets its tables need (or KafkaSinkOptions::read_from).
  void assign_partitions(SinkInput& input);

 private:
  // Reads TOPIC's tables' offsets and epoch; false when another sink claimed them (fenced).
  bool open_table(const std::string& topic, const std::map<std::string, iceberg::TableIdentifier>& existing,
                  SinkInput& input);

  const SinkContext& sink_;
  const KafkaSinkOptions& options_;
  SessionState& state_;
  std::map<std::string, TableOutput>& outputs_;
};

}  // namespace binberg::sink
