// The deterministic simulation of `binberg sink` (sink_simulation.h): 1,000 seeds in `make test`,
// 100,000 in `make simulate`. A failing seed prints the command that replays it alone; with
// BINBERG_SIMULATION_LOG=1 the replay logs what the sinks did.

#include <gtest/gtest.h>

#include "sink/sink_simulation.h"
#include "support/simulation.h"

namespace binberg::sink::simulation {
namespace {

TEST(SinkSimulation, EverySeedKeepsEveryInvariantOfTheSink) {
  testing::run_seeds(1'000, [](std::uint64_t seed) { simulate(seed); });
}

// Retention deletes records of t0's topic under the sinks (already applied, read but not committed
// yet, or never read) and the simulated consumer jumps to what is left, as librdkafka does with
// auto.offset.reset = earliest: no table may commit past a change it did not apply; the table
// that lost records stops, the other goes on to the end.
TEST(SinkSimulation, NoTableCommitsPastRecordsRetentionDeletedBeforeItAppliedThem) {
  testing::run_seeds(300, [](std::uint64_t seed) { simulate(seed, Retention::kDeletes); });
}

// Seeds of the test above that found defects: 29, a re-read meeting deleted records its table
// already held, called a gap (a transaction then reached its tables in two commits); 392, the
// missing records of a transaction deleted with no record or end after them to show it (the sink
// waited for the transaction for ever).
TEST(SinkSimulation, RetentionSeedsThatFoundDefectsStayFixed) {
  testing::run_listed_seeds({29, 392}, [](std::uint64_t seed) { simulate(seed, Retention::kDeletes); });
}

}  // namespace
}  // namespace binberg::sink::simulation
