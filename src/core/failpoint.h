#pragma once

// Named failpoints: deterministic fault injection at exact places in the pipeline and the commit
// protocol. Tests and drills arm them through BINBERG_FAILPOINTS or programmatically:
//
//   BINBERG_FAILPOINTS="sink.before_commit=crash@3;source.after_read=delay(250)#10"
//
// Each entry is NAME=ACTION[@N][#M]: ACTION is `error` (throw FailpointError), `crash` (SIGKILL
// the process, exactly like `kill -9`: no flush, no destructors), `delay(MS)` or `corrupt` (hit()
// returns true and the caller damages what it is about to hand on: poison bytes for drills; only
// the points docs/failpoints.md marks as corruptible act on it); @N fires from the N-th hit on
// (1-based, default 1); #M fires at most M times (default unlimited).
// An unarmed failpoint costs one relaxed atomic load.

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "core/error.h"

namespace binberg::failpoint {

// kCall runs a function armed with arm_call (tests only: it makes an interleaving exact, e.g. a
// concurrent commit at one precise step of a compaction, without sleeps).
enum class Action { kError, kCrash, kDelay, kCall, kCorrupt };

struct Trigger {
  Action action = Action::kError;
  std::chrono::milliseconds delay{0};
  std::uint64_t from_hit = 1;
  std::uint64_t max_fires = std::numeric_limits<std::uint64_t>::max();

  bool operator==(const Trigger&) const = default;
};

class FailpointError : public Error {
 public:
  explicit FailpointError(std::string name);
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// Parses a BINBERG_FAILPOINTS value; throws ConfigError naming the bad entry.
std::map<std::string, Trigger, std::less<>> parse(std::string_view spec);

void arm(const std::string& name, const Trigger& trigger);
// Arms NAME to run CALL on the hits TRIGGER selects (its action is taken to be kCall). CALL runs on
// the thread that hit the failpoint, outside any lock; what it throws propagates from hit().
void arm_call(const std::string& name, std::function<void()> call, Trigger trigger = {});
void disarm(std::string_view name);
void disarm_all();
// Arms what BINBERG_FAILPOINTS names (replacing what was armed); a no-op when it is unset.
void arm_from_environment();

// Evaluates the failpoint NAME: counts the hit and fires its trigger if one is armed. Returns
// true only when a `corrupt` trigger fired: the caller then corrupts its data.
bool hit(std::string_view name);
// Hits seen by NAME since it was armed (0 when not armed).
std::uint64_t hit_count(std::string_view name);

}  // namespace binberg::failpoint
