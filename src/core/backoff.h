#pragma once

// How long to wait before trying again after a failure: FIRST, doubling, up to MOST, then MOST.
// Every retry loop in binberg waits this way. MOST is short (5 s by default) because what
// recovers is a service binberg needs (a broker, the source, the catalog): once it serves again,
// binberg is back within MOST, however long the outage lasted.

#include <algorithm>
#include <chrono>

#include "core/assert.h"

namespace binberg {

class Backoff {
 public:
  static constexpr std::chrono::milliseconds kMost{5'000};

  explicit Backoff(std::chrono::milliseconds first, std::chrono::milliseconds most = kMost)
      : first_(first), most_(most), next_(first) {
    BINBERG_ASSERT(first.count() > 0 && first <= most, "backoff from {} ms up to {} ms", first.count(), most.count());
  }

  // The wait before the next attempt; the one after it is twice as long, up to MOST.
  std::chrono::milliseconds next() {
    const std::chrono::milliseconds delay = next_;
    next_ = std::min(next_ * 2, most_);
    return delay;
  }
  // After progress: the next failure waits FIRST again.
  void reset() { next_ = first_; }

 private:
  std::chrono::milliseconds first_, most_, next_;
};

}  // namespace binberg
