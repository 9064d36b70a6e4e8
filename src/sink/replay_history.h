#pragma once

// What a dead-letter replay is judged by (record_judgement.h, judge_replay_across): the records a
// newer change of its key may be in, read from the topic. A key's partition follows its encoded
// key, so a replay after a key schema change may find the key's newer changes in another
// partition: every partition of the topic is read, its origin's from the origin on, the others
// from a while before the origin was written.

#include <chrono>
#include <vector>

#include "kafka/consumer.h"
#include "sink/record_judgement.h"
#include "sink/sink_ports.h"

namespace binberg::sink {

// Records carry their producer's clock, and a source started again on another host may run
// behind: the partitions the origin is not in are read from this long before the origin's time.
inline constexpr std::chrono::milliseconds kReplayClockSlack = std::chrono::minutes(10);

// The records of REPLAY's topic, per partition, that REPLAY_OF's origin may be superseded by: up
// to the replay itself in its own partition, to the end in the others.
std::vector<std::vector<HistoryRecord>> replay_history(SinkInput& input, const kafka::ConsumedRecord& replay,
                                                       const ReplayOf& replay_of);

}  // namespace binberg::sink
