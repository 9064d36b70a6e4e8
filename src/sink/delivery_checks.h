#pragma once

// Invariant 5 (kafka_sink.h), nothing skipped, as records arrive: whether the reader went past
// records that were deleted (retention, a topic made again) before it read them. Such a gap stops
// its table before anything of it is committed past the gap (stop_at_gap); records skipped
// legitimately (transaction markers, aborted records) and deleted records the table already holds
// are no gap (gap_in_delivery). The consumer reports an offset it cannot read instead of jumping,
// so these are the second line: a fetch that raced retention, a consumer configured otherwise, a
// simulated one.

#include "kafka/consumer.h"
#include "sink/progress.h"
#include "sink/session_state.h"
#include "sink/sink_ports.h"

namespace binberg::sink {

class DeliveryChecks {
 public:
  DeliveryChecks(SessionState& state, SinkInput& input) : state_(state), input_(input) {}

  // RECORD arrived: did the reader skip deleted records before it?
  void record(const kafka::ConsumedRecord& record);
  // A partition's end arrived: a consumer that jumped over deleted records to the end of what is
  // left reports the end with no record after the jump. Its table is not "read to its end" (it
  // would claim a source position it lacks changes before): it has a gap.
  void end(const kafka::PartitionEnd& end);
  // Every partition, asking the broker where each starts: while transactions wait to arrive whole,
  // their missing records may have been deleted with no record or end after them to show it. A
  // broker that does not answer leaves the wait as it was.
  void partition_starts();

 private:
  // Stops TABLE when PARTITION, where the reader expected EXPECTED next and went on at DELIVERED
  // (a record, or the partition's start), starts at FIRST past what the table needs.
  void stop_at_deleted(const TableState& table, Partition partition, Offset expected, Offset delivered, Offset first);

  SessionState& state_;
  SinkInput& input_;
};

}  // namespace binberg::sink
