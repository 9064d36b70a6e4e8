// The one way binberg waits before trying again (core/backoff.h). Its cap bounds how long binberg
// may sleep after a service it needs serves again, however long the outage was (the source's,
// the sink's and the replicator's sessions used to wait up to 30 s).

#include "core/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace binberg {
namespace {

using std::chrono::milliseconds;

std::vector<long long> waits(Backoff& backoff, int count) {
  std::vector<long long> delays;
  for (int i = 0; i < count; ++i) delays.push_back(backoff.next().count());
  return delays;
}

TEST(BackoffTest, DoublesFromTheFirstWaitUpToFiveSecondsHoweverLongTheOutage) {
  Backoff backoff(milliseconds(500));
  EXPECT_EQ(waits(backoff, 8), (std::vector<long long>{500, 1000, 2000, 4000, 5000, 5000, 5000, 5000}));
  for (int i = 0; i < 1000; ++i) EXPECT_LE(backoff.next(), milliseconds(5000));
}

TEST(BackoffTest, ProgressStartsTheWaitsOver) {
  Backoff backoff(milliseconds(100), milliseconds(300));
  EXPECT_EQ(waits(backoff, 3), (std::vector<long long>{100, 200, 300}));
  backoff.reset();
  EXPECT_EQ(waits(backoff, 2), (std::vector<long long>{100, 200}));
}

TEST(BackoffDeathTest, AFirstWaitLongerThanTheCapIsABug) {
  EXPECT_DEATH(Backoff(milliseconds(600), milliseconds(500)), "backoff from 600 ms up to 500 ms");
}

}  // namespace
}  // namespace binberg
