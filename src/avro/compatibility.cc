#include "avro/compatibility.h"

#include <array>
#include <utility>

#include "avro/resolution.h"
#include "core/error.h"

namespace binberg::avro {

namespace {

constexpr std::array<std::pair<std::string_view, Compatibility>, 7> kNames = {{
    {"NONE", Compatibility::kNone},
    {"BACKWARD", Compatibility::kBackward},
    {"FORWARD", Compatibility::kForward},
    {"FULL", Compatibility::kFull},
    {"BACKWARD_TRANSITIVE", Compatibility::kBackwardTransitive},
    {"FORWARD_TRANSITIVE", Compatibility::kForwardTransitive},
    {"FULL_TRANSITIVE", Compatibility::kFullTransitive},
}};

bool is_transitive(Compatibility level) {
  return level == Compatibility::kBackwardTransitive || level == Compatibility::kForwardTransitive ||
         level == Compatibility::kFullTransitive;
}

bool checks_backward(Compatibility level) {
  return level == Compatibility::kBackward || level == Compatibility::kBackwardTransitive ||
         level == Compatibility::kFull || level == Compatibility::kFullTransitive;
}

bool checks_forward(Compatibility level) {
  return level == Compatibility::kForward || level == Compatibility::kForwardTransitive ||
         level == Compatibility::kFull || level == Compatibility::kFullTransitive;
}

}  // namespace

std::string_view compatibility_name(Compatibility level) {
  for (const auto& [name, value] : kNames) {
    if (value == level) return name;
  }
  return "NONE";
}

std::optional<Compatibility> parse_compatibility(std::string_view name) {
  for (const auto& [known, value] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> check_compatibility(const Schema& candidate, std::span<const Schema> history,
                                             Compatibility level) {
  std::vector<std::string> messages;
  if (level == Compatibility::kNone || history.empty()) return messages;
  const std::size_t first = is_transitive(level) ? 0 : history.size() - 1;
  for (std::size_t i = first; i < history.size(); ++i) {
    const Node& existing = history[i].root();
    auto report = [&](std::string_view direction, const Node& writer, const Node& reader) {
      for (std::string& problem : resolution_problems(writer, reader)) {
        messages.push_back(fmt::format("{}, version {}: {}", direction, i + 1, problem));
      }
    };
    if (checks_backward(level)) report("backward", existing, candidate.root());
    if (checks_forward(level)) report("forward", candidate.root(), existing);
  }
  return messages;
}

}  // namespace binberg::avro
