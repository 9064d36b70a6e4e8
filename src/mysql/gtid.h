#pragma once

// MariaDB global transaction ids. A GTID is domain-server-sequence; a replication position is a
// list holding the last GTID applied in each domain ("0-1-42,1-7-9"), as @@gtid_binlog_pos prints.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace binberg::mysql {

struct Gtid {
  std::uint32_t domain = 0;
  std::uint32_t server = 0;
  std::uint64_t sequence = 0;

  // Throws ConfigError for anything but three decimal fields in range.
  static Gtid parse(std::string_view text);
  std::string to_string() const;
  auto operator<=>(const Gtid&) const = default;
};

class GtidPosition {
 public:
  // Parses a comma-separated list, one GTID per domain; "" is the empty position.
  static GtidPosition parse(std::string_view text);

  // Records GTID as applied. Sequence numbers only grow within a domain (gtid_strict_mode): a
  // GTID at or below the recorded one is a replay or a server mix-up, and throws Error.
  void advance(const Gtid& gtid);
  // True when GTID's transaction is at or before this position in its domain.
  bool contains(const Gtid& gtid) const;
  std::optional<Gtid> in_domain(std::uint32_t domain) const;
  bool empty() const { return by_domain_.empty(); }
  std::string to_string() const;
  bool operator==(const GtidPosition&) const = default;

 private:
  std::map<std::uint32_t, Gtid> by_domain_;
};

}  // namespace binberg::mysql
