#include "envelope/transaction_footprint.h"

#include <fmt/format.h>

#include <charconv>

#include "core/error.h"

namespace binberg::envelope {
namespace {

template <typename T>
T number(std::string_view text, std::string_view whole) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    fail("transaction footprint '{}': '{}' is not a number", whole, text);
  }
  return value;
}

}  // namespace

std::string format_footprint(const Footprint& footprint) {
  std::string text;
  for (const auto& [partition, records] : footprint) {
    if (!text.empty()) text += ',';
    text += fmt::format("{}/{}={}", partition.first, partition.second, records);
  }
  return text;
}

Footprint parse_footprint(std::string_view text) {
  if (text.empty()) fail("transaction footprint is empty");
  Footprint footprint;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    const std::size_t slash = part.rfind('/'), equals = part.rfind('=');
    if (slash == std::string_view::npos || equals == std::string_view::npos || equals < slash || slash == 0) {
      fail("transaction footprint '{}': '{}' is not <topic>/<partition>=<records>", text, part);
    }
    const TopicPartition partition{std::string(part.substr(0, slash)),
                                   number<std::int32_t>(part.substr(slash + 1, equals - slash - 1), text)};
    const auto records = number<std::uint32_t>(part.substr(equals + 1), text);
    if (records == 0 || !footprint.emplace(partition, records).second) {
      fail("transaction footprint '{}': {}/{} is empty or listed twice", text, partition.first, partition.second);
    }
    start = comma + 1;
  }
  return footprint;
}

}  // namespace binberg::envelope
