#include "sink/replay_history.h"

namespace binberg::sink {

std::vector<std::vector<HistoryRecord>> replay_history(SinkInput& input, const kafka::ConsumedRecord& replay,
                                                       const ReplayOf& replay_of) {
  const RecordOrigin& origin = replay_of.origin;
  std::vector<std::vector<HistoryRecord>> partitions;
  for (std::int32_t number = 0; number < input.partition_count(replay.topic); ++number) {
    const Partition partition(number);
    Offset from;  // the partition's start when the origin's time is unknown
    if (origin.topic == replay.topic && origin.partition == number) {
      from = Offset(origin.offset).next();
    } else if (replay_of.origin_timestamp_ms) {
      from = input.offset_at_time(replay.topic, partition, *replay_of.origin_timestamp_ms - kReplayClockSlack.count());
    }
    const Offset to = number == replay.partition ? Offset(replay.offset) : kToTheEnd;
    partitions.push_back(input.read_between(replay.topic, partition, from, to));
  }
  return partitions;
}

}  // namespace binberg::sink
