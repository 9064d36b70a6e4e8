#include "mysql/gtid.h"

#include <charconv>

#include "core/error.h"

namespace binberg::mysql {
namespace {

template <typename T>
T parse_field(std::string_view field, std::string_view gtid) {
  T value{};
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
    throw ConfigError(
        fmt::format("invalid GTID '{}': '{}' is not a number in range (expected domain-server-seq)", gtid, field));
  }
  return value;
}

}  // namespace

Gtid Gtid::parse(std::string_view text) {
  auto first = text.find('-');
  auto second = first == std::string_view::npos ? first : text.find('-', first + 1);
  if (second == std::string_view::npos) {
    throw ConfigError(fmt::format("invalid GTID '{}': expected domain-server-seq, e.g. 0-1-42", text));
  }
  return Gtid{parse_field<std::uint32_t>(text.substr(0, first), text),
              parse_field<std::uint32_t>(text.substr(first + 1, second - first - 1), text),
              parse_field<std::uint64_t>(text.substr(second + 1), text)};
}

std::string Gtid::to_string() const { return fmt::format("{}-{}-{}", domain, server, sequence); }

GtidPosition GtidPosition::parse(std::string_view text) {
  GtidPosition position;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\n')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\n')) item.remove_suffix(1);
    if (item.empty()) continue;
    Gtid gtid = Gtid::parse(item);
    if (!position.by_domain_.emplace(gtid.domain, gtid).second) {
      throw ConfigError(fmt::format("invalid GTID position: domain {} appears twice", gtid.domain));
    }
  }
  return position;
}

void GtidPosition::advance(const Gtid& gtid) {
  auto [it, inserted] = by_domain_.emplace(gtid.domain, gtid);
  if (inserted) return;
  if (gtid.sequence <= it->second.sequence) {
    fail("GTID {} does not follow {} in domain {}: replayed or out-of-order transaction", gtid.to_string(),
         it->second.to_string(), gtid.domain);
  }
  it->second = gtid;
}

bool GtidPosition::contains(const Gtid& gtid) const {
  auto it = by_domain_.find(gtid.domain);
  return it != by_domain_.end() && gtid.sequence <= it->second.sequence;
}

std::optional<Gtid> GtidPosition::in_domain(std::uint32_t domain) const {
  auto it = by_domain_.find(domain);
  if (it == by_domain_.end()) return std::nullopt;
  return it->second;
}

std::string GtidPosition::to_string() const {
  std::string out;
  for (const auto& [domain, gtid] : by_domain_) {
    if (!out.empty()) out += ',';
    out += gtid.to_string();
  }
  return out;
}

}  // namespace binberg::mysql
