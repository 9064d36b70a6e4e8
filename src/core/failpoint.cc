#include "core/failpoint.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace binberg::failpoint {
namespace {

struct Armed {
  Trigger trigger;
  std::function<void()> call;
  std::uint64_t hits = 0;
  std::uint64_t fires = 0;
};

std::mutex& table_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, Armed, std::less<>>& table() {
  static std::map<std::string, Armed, std::less<>> armed;
  return armed;
}
std::atomic<bool> any_armed{false};

std::uint64_t parse_count(std::string_view text, std::string_view entry) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) {
    throw ConfigError(fmt::format("BINBERG_FAILPOINTS: '{}' in '{}' is not a positive integer", text, entry));
  }
  return value;
}

Trigger parse_trigger(std::string_view text, std::string_view entry) {
  Trigger trigger;
  if (auto hash = text.rfind('#'); hash != std::string_view::npos) {
    trigger.max_fires = parse_count(text.substr(hash + 1), entry);
    text = text.substr(0, hash);
  }
  if (auto at = text.rfind('@'); at != std::string_view::npos) {
    trigger.from_hit = parse_count(text.substr(at + 1), entry);
    text = text.substr(0, at);
  }
  if (text == "error") {
    trigger.action = Action::kError;
  } else if (text == "corrupt") {
    trigger.action = Action::kCorrupt;
  } else if (text == "crash") {
    trigger.action = Action::kCrash;
  } else if (text.starts_with("delay(") && text.ends_with(")")) {
    trigger.action = Action::kDelay;
    trigger.delay = std::chrono::milliseconds(parse_count(text.substr(6, text.size() - 7), entry));
  } else {
    throw ConfigError(fmt::format(
        "BINBERG_FAILPOINTS: unknown action '{}' in '{}' (expected error, crash, delay(MS) or corrupt)", text, entry));
  }
  return trigger;
}

[[noreturn]] void crash(std::string_view name) {
  // Only async-signal-safe calls: the point is to die exactly as `kill -9` would.
  std::string line = fmt::format("binberg: failpoint {} fired: crash (SIGKILL)\n", name);
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, line.data(), line.size());
  ::kill(::getpid(), SIGKILL);
  std::_Exit(137);
}

}  // namespace

FailpointError::FailpointError(std::string name)
    : Error(fmt::format("failpoint {} fired: injected error", name)), name_(std::move(name)) {}

std::map<std::string, Trigger, std::less<>> parse(std::string_view spec) {
  std::map<std::string, Trigger, std::less<>> result;
  while (!spec.empty()) {
    auto semi = spec.find(';');
    std::string_view entry = spec.substr(0, semi);
    spec = semi == std::string_view::npos ? std::string_view() : spec.substr(semi + 1);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.empty()) continue;
    auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw ConfigError(fmt::format("BINBERG_FAILPOINTS: entry '{}' is not NAME=ACTION", entry));
    }
    result[std::string(entry.substr(0, eq))] = parse_trigger(entry.substr(eq + 1), entry);
  }
  return result;
}

void arm(const std::string& name, const Trigger& trigger) {
  std::lock_guard lock(table_mutex());
  table()[name] = Armed{trigger, {}};
  any_armed.store(true, std::memory_order_release);
}

void arm_call(const std::string& name, std::function<void()> call, Trigger trigger) {
  trigger.action = Action::kCall;
  std::lock_guard lock(table_mutex());
  table()[name] = Armed{trigger, std::move(call)};
  any_armed.store(true, std::memory_order_release);
}

void disarm(std::string_view name) {
  std::lock_guard lock(table_mutex());
  if (auto it = table().find(name); it != table().end()) table().erase(it);
  any_armed.store(!table().empty(), std::memory_order_release);
}

void disarm_all() {
  std::lock_guard lock(table_mutex());
  table().clear();
  any_armed.store(false, std::memory_order_release);
}

void arm_from_environment() {
  const char* spec = std::getenv("BINBERG_FAILPOINTS");
  if (spec == nullptr) return;
  auto parsed = parse(spec);
  disarm_all();
  for (const auto& [name, trigger] : parsed) arm(name, trigger);
}

bool hit(std::string_view name) {
  if (!any_armed.load(std::memory_order_relaxed)) return false;
  Trigger trigger;
  std::function<void()> call;
  {
    std::lock_guard lock(table_mutex());
    auto it = table().find(name);
    if (it == table().end()) return false;
    Armed& armed = it->second;
    ++armed.hits;
    if (armed.hits < armed.trigger.from_hit || armed.fires >= armed.trigger.max_fires) return false;
    ++armed.fires;
    trigger = armed.trigger;
    call = armed.call;
  }
  switch (trigger.action) {
    case Action::kError:
      throw FailpointError(std::string(name));
    case Action::kCrash:
      crash(name);
    case Action::kDelay:
      // Said when it begins, so a test or drill can act while the process waits here.
      spdlog::warn("failpoint {} fired: delay {} ms", name, trigger.delay.count());
      std::this_thread::sleep_for(trigger.delay);
      return false;
    case Action::kCall:
      if (call) call();
      return false;
    case Action::kCorrupt:
      return true;
  }
  return false;
}

std::uint64_t hit_count(std::string_view name) {
  std::lock_guard lock(table_mutex());
  auto it = table().find(name);
  return it == table().end() ? 0 : it->second.hits;
}

}  // namespace binberg::failpoint
