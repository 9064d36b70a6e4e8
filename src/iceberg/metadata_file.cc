#include "iceberg/metadata_file.h"

#include <fmt/format.h>

#include <limits>

#include "core/error.h"
#include "iceberg/detail/durable_file.h"
#include "iceberg/detail/text_parsing.h"

namespace binberg::iceberg {
namespace {

constexpr std::string_view kFileScheme = "file:";

// The location of CHILD under LOCATION, in the scheme LOCATION is written in.
std::string join_location(std::string_view location, std::string_view child) {
  while (location.size() > 1 && location.back() == '/') location.remove_suffix(1);
  return fmt::format("{}/{}", location, child);
}

}  // namespace

std::string metadata_file_name(std::int32_t version, const Uuid& uuid) {
  if (version < 0) fail("metadata file version must not be negative, got {}", version);
  return fmt::format("{:05d}-{}.metadata.json", version, uuid.to_string());
}

std::optional<std::int32_t> metadata_file_version(std::string_view path) {
  constexpr std::string_view kSuffix = ".metadata.json";
  constexpr std::size_t kUuidLength = 36;
  const std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1 == 0: no directory
  const std::size_t dash = name.find('-');
  if (dash < 5 || dash == std::string_view::npos || !name.ends_with(kSuffix) ||
      name.size() != dash + 1 + kUuidLength + kSuffix.size()) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(0, dash);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const auto version = parse_integer(digits);
  if (!version || *version > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  try {
    Uuid::parse(name.substr(dash + 1, kUuidLength));
  } catch (const Error&) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(*version);
}

std::filesystem::path local_path(std::string_view location) {
  if (location.starts_with("/")) return std::filesystem::path(location);
  if (location.starts_with(kFileScheme)) {
    std::string_view rest = location.substr(kFileScheme.size());
    // file:///x and file:/x are the same path; file://host/x names another host.
    if (rest.starts_with("//")) {
      rest.remove_prefix(2);
      if (!rest.starts_with("/")) fail("location {} names a remote host; only local paths are supported", location);
    }
    if (rest.starts_with("/")) return std::filesystem::path(rest);
  }
  fail("location {} is not a local absolute path or file:/ URI", location);
}

std::string write_metadata_file(const TableMetadata& metadata, std::int32_t version) {
  const std::string contents = table_metadata_to_string(metadata);
  const std::string file_location =
      join_location(metadata.location, "metadata/" + metadata_file_name(version, Uuid::random()));
  durable::write_new_file(local_path(file_location), contents, fmt::format("cannot write {}", file_location));
  return file_location;
}

TableMetadata read_metadata_file(std::string_view location) {
  return with_context(fmt::format("iceberg metadata {}", location),
                      [&] { return table_metadata_from_string(read_file(local_path(location).string())); });
}

}  // namespace binberg::iceberg
