// The deterministic simulation of `binberg sink` (sink_simulation.h): 1,000 seeds in `make test`,
// 100,000 in `make simulate`. A failing seed prints the command that replays it alone; with
// BINBERG_SIMULATION_LOG=1 the replay logs what the sinks did.

#include <gtest/gtest.h>

#include "sink/sink_simulation.h"
#include "support/simulation.h"

namespace binberg::sink::simulation {
namespace {

TEST(SinkSimulation, EverySeedKeepsEveryInvariantOfTheSink) { testing::run_seeds(1'000, simulate); }

}  // namespace
}  // namespace binberg::sink::simulation
