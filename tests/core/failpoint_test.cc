#include "core/failpoint.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include <chrono>
#include <csignal>
#include <cstdlib>

namespace binberg::failpoint {
namespace {

class FailpointTest : public ::testing::Test {
 protected:
  void TearDown() override { disarm_all(); }
};

TEST_F(FailpointTest, ParsesEveryActionAndModifier) {
  auto parsed = parse(" a.b=error ; c=crash@3;d=delay(250)#2; e=error@2#5;");
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed["a.b"], (Trigger{Action::kError}));
  EXPECT_EQ(parsed["c"].action, Action::kCrash);
  EXPECT_EQ(parsed["c"].from_hit, 3u);
  EXPECT_EQ(parsed["d"].action, Action::kDelay);
  EXPECT_EQ(parsed["d"].delay, std::chrono::milliseconds(250));
  EXPECT_EQ(parsed["d"].max_fires, 2u);
  EXPECT_EQ(parsed["e"].from_hit, 2u);
  EXPECT_EQ(parsed["e"].max_fires, 5u);
}

TEST_F(FailpointTest, RejectsMalformedEntriesNamingThem) {
  for (const char* bad : {"noequals", "=error", "x=explode", "x=delay(abc)", "x=error@0", "x=error#-1", "x=delay(5"}) {
    try {
      parse(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("BINBERG_FAILPOINTS"), std::string::npos) << e.what();
    }
  }
}

TEST_F(FailpointTest, UnarmedPointDoesNothing) {
  EXPECT_NO_THROW(hit("sink.before_commit"));
  EXPECT_EQ(hit_count("sink.before_commit"), 0u);
}

TEST_F(FailpointTest, ErrorFiresFromTheNthHitAtMostMTimes) {
  arm("p", Trigger{Action::kError, {}, 2, 2});
  EXPECT_NO_THROW(hit("p"));
  EXPECT_THROW(hit("p"), FailpointError);
  EXPECT_THROW(hit("p"), FailpointError);
  EXPECT_NO_THROW(hit("p"));
  EXPECT_EQ(hit_count("p"), 4u);
  EXPECT_NO_THROW(hit("other"));
}

TEST_F(FailpointTest, ErrorNamesTheFailpoint) {
  arm("iceberg.before_catalog_commit", Trigger{Action::kError});
  try {
    hit("iceberg.before_catalog_commit");
    FAIL() << "did not throw";
  } catch (const FailpointError& e) {
    EXPECT_EQ(e.name(), "iceberg.before_catalog_commit");
    EXPECT_NE(std::string(e.what()).find("iceberg.before_catalog_commit"), std::string::npos);
  }
}

TEST_F(FailpointTest, DelaySleeps) {
  arm("slow", Trigger{Action::kDelay, std::chrono::milliseconds(30)});
  const auto start = std::chrono::steady_clock::now();
  hit("slow");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
}

TEST_F(FailpointTest, CallRunsTheArmedFunctionOnTheSelectedHits) {
  std::vector<std::uint64_t> calls;
  arm_call(
      "step", [&] { calls.push_back(hit_count("step")); }, Trigger{Action::kCall, {}, 2, 2});
  for (int i = 0; i < 5; ++i) hit("step");
  EXPECT_EQ(calls, (std::vector<std::uint64_t>{2, 3})) << "from the 2nd hit, at most twice";
  arm_call("throws", [] { throw std::runtime_error("from the call"); });
  EXPECT_THROW(hit("throws"), std::runtime_error);
}

TEST_F(FailpointTest, CorruptTellsTheCallerOnTheSelectedHitsOnly) {
  auto parsed = parse("poison=corrupt@2#1");
  ASSERT_EQ(parsed["poison"].action, Action::kCorrupt);
  arm("poison", parsed["poison"]);
  std::vector<bool> corrupted;
  for (int i = 0; i < 4; ++i) corrupted.push_back(hit("poison"));
  EXPECT_EQ(corrupted, (std::vector<bool>{false, true, false, false})) << "the 2nd hit, once";
  arm("p", Trigger{Action::kDelay, std::chrono::milliseconds(1)});
  EXPECT_FALSE(hit("p")) << "other actions never ask for corruption";
  EXPECT_FALSE(hit("unarmed"));
}

TEST_F(FailpointTest, DisarmStopsFiring) {
  arm("p", Trigger{Action::kError});
  disarm("p");
  EXPECT_NO_THROW(hit("p"));
}

TEST_F(FailpointTest, EnvironmentReplacesArmedSet) {
  arm("old", Trigger{Action::kError});
  ::setenv("BINBERG_FAILPOINTS", "new=error", 1);
  arm_from_environment();
  ::unsetenv("BINBERG_FAILPOINTS");
  EXPECT_NO_THROW(hit("old"));
  EXPECT_THROW(hit("new"), FailpointError);
}

TEST(FailpointDeathTest, CrashKillsTheProcessLikeSigkill) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        arm("c", Trigger{Action::kCrash});
        hit("c");
      },
      ::testing::KilledBySignal(SIGKILL), "failpoint c fired: crash");
}

}  // namespace
}  // namespace binberg::failpoint
