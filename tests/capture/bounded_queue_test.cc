// The queue between the binlog reader and the applier: bounded by cost, order kept, the
// producer held back while it is full, and a producer's failure handed on after its items.

#include "capture/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace binberg::capture {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueueTest, KeepsOrderAndCountsCost) {
  BoundedQueue<int> queue(10);
  std::chrono::steady_clock::duration waited{};
  ASSERT_TRUE(queue.push(1, 4, waited));
  ASSERT_TRUE(queue.push(2, 6, waited));
  EXPECT_EQ(queue.held(), 10u);
  EXPECT_EQ(queue.pop(0ms), 1);
  EXPECT_EQ(queue.held(), 6u);
  EXPECT_EQ(queue.pop(0ms), 2);
  EXPECT_EQ(queue.pop(0ms), std::nullopt) << "empty: the timeout passes";
  ASSERT_TRUE(queue.push(3, 25, waited)) << "an item costlier than the capacity goes into an empty queue";
  EXPECT_EQ(queue.pop(0ms), 3);
}

TEST(BoundedQueueTest, FullQueueHoldsTheProducerUntilThereIsRoom) {
  BoundedQueue<int> queue(2);
  std::chrono::steady_clock::duration waited{};
  ASSERT_TRUE(queue.push(1, 2, waited));
  std::atomic<bool> pushed{false};
  std::chrono::steady_clock::duration producer_waited{};
  const auto spawned = std::chrono::steady_clock::now();
  std::thread producer([&] {
    queue.push(2, 1, producer_waited);
    pushed = true;
  });
  // Give the producer time to reach the full queue; whether it got there or not, a correct
  // queue never lets it past before the pop below, so this cannot fail on a slow machine.
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(pushed) << "the producer went past a full queue";
  EXPECT_EQ(queue.pop(1s), 1);
  producer.join();
  const auto elapsed = std::chrono::steady_clock::now() - spawned;
  EXPECT_TRUE(pushed);
  // The wait is measured (it becomes backpressure time) and lies within the producer's life;
  // no lower bound in wall-clock terms: scheduling on a shared machine decides it.
  EXPECT_GT(producer_waited, 0ns);
  EXPECT_LE(producer_waited, elapsed);
  EXPECT_EQ(queue.pop(1s), 2);
}

TEST(BoundedQueueTest, CloseReleasesABlockedProducer) {
  BoundedQueue<int> queue(1);
  std::chrono::steady_clock::duration waited{};
  ASSERT_TRUE(queue.push(1, 1, waited));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = queue.push(2, 1, waited) ? 1 : 0; });
  queue.close();
  producer.join();
  EXPECT_EQ(result, 0);
}

TEST(BoundedQueueTest, ProducerFailureArrivesAfterItsItems) {
  BoundedQueue<int> queue(10);
  std::chrono::steady_clock::duration waited{};
  ASSERT_TRUE(queue.push(1, 1, waited));
  queue.fail(std::make_exception_ptr(std::runtime_error("binlog 7:42: bad event")));
  EXPECT_EQ(queue.pop(0ms), 1);
  EXPECT_THROW(queue.pop(0ms), std::runtime_error);
  EXPECT_FALSE(queue.push(2, 1, waited)) << "a failed queue takes nothing more";
}

}  // namespace
}  // namespace binberg::capture
