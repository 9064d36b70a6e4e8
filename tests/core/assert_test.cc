#include "core/assert.h"

#include <gtest/gtest.h>

namespace binberg {
namespace {

TEST(AssertDeathTest, ABrokenInvariantAbortsNamingTheConditionAndTheValues) {
  const int offset = 7, committed = 9;
  EXPECT_DEATH(BINBERG_ASSERT(offset >= committed, "offset {} below committed {}", offset, committed),
               "assertion failed at .*assert_test.cc:[0-9]+: offset >= committed: offset 7 below committed 9");
}

TEST(AssertDeathTest, TheAssertionNoteSaysHowToReproduce) {
  EXPECT_DEATH(
      {
        set_assertion_note("replay with: SEED=42");
        BINBERG_UNREACHABLE("state {}", "lost");
      },
      "unreachable: state lost\nreplay with: SEED=42");
}

TEST(AssertTest, AHoldingInvariantCostsNothingVisible) {
  int evaluated = 0;
  BINBERG_ASSERT(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

#ifndef NDEBUG
TEST(AssertDeathTest, DebugAssertionsAreOnInSanitizerBuilds) {
  EXPECT_DEATH(BINBERG_DASSERT(false, "expensive check {}", 1), "expensive check 1");
}
#endif

}  // namespace
}  // namespace binberg
