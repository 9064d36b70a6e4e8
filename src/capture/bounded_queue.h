#pragma once

// A queue between two pipeline threads, bounded by the cost of what it holds (row events, not
// items), so a fast producer cannot run ahead of a slow consumer by more than a fixed amount of
// memory. The producer blocks while the queue is full (backpressure, timed); the consumer blocks
// while it is empty. Either side can end it: close() wakes both, and a producer's failure reaches
// the consumer as the exception it threw.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>

namespace binberg::capture {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Adds ITEM of COST, waiting while the queue holds CAPACITY or more (an item costlier than the
  // whole capacity still goes into an empty queue). False when the queue was closed. Returns
  // the time spent waiting through WAITED.
  bool push(T item, std::size_t cost, std::chrono::steady_clock::duration& waited) {
    std::unique_lock lock(mutex_);
    const auto started = std::chrono::steady_clock::now();
    not_full_.wait(lock, [&] { return closed_ || held_ == 0 || held_ + cost <= capacity_; });
    waited = std::chrono::steady_clock::now() - started;
    if (closed_) return false;
    held_ += cost;
    items_.emplace_back(std::move(item), cost);
    not_empty_.notify_one();
    return true;
  }

  // The oldest item, waiting up to TIMEOUT; nullopt on timeout or when closed and empty. Rethrows
  // the producer's failure once the items pushed before it are taken.
  std::optional<T> pop(std::chrono::steady_clock::duration timeout) {
    std::unique_lock lock(mutex_);
    not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) {
      if (failure_) std::rethrow_exception(failure_);
      return std::nullopt;
    }
    auto [item, cost] = std::move(items_.front());
    items_.pop_front();
    held_ -= cost;
    not_full_.notify_one();
    return std::move(item);
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }
  // Closes the queue with the producer's FAILURE.
  void fail(std::exception_ptr failure) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(failure);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  std::size_t held() const {
    std::lock_guard lock(mutex_);
    return held_;
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<std::pair<T, std::size_t>> items_;
  std::size_t held_ = 0;
  bool closed_ = false;
  std::exception_ptr failure_;
};

}  // namespace binberg::capture
