#include "iceberg/detail/text_parsing.h"

#include <charconv>

namespace binberg::iceberg {

std::optional<std::string_view> enclosed(std::string_view text, std::string_view open, char close) {
  if (text.size() <= open.size() || !text.starts_with(open) || text.back() != close) return std::nullopt;
  return text.substr(open.size(), text.size() - open.size() - 1);
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace binberg::iceberg
