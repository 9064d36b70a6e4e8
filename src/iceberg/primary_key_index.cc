#include "iceberg/primary_key_index.h"

#include <limits>

#include "core/error.h"
#include "iceberg/single_value.h"

namespace binberg::iceberg {

std::string encode_key(const Schema& schema, const Row& row) {
  const auto& fields = schema.fields();
  if (row.size() != fields.size()) fail("key of {} values for {} key columns", row.size(), fields.size());
  std::string key;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (std::holds_alternative<std::monostate>(row[i])) {
      key += '\0';
      continue;
    }
    const Bytes bytes = to_single_value(*fields[i].type, row[i]);
    const auto size = static_cast<std::uint32_t>(bytes.size());
    key += '\1';
    key.append(reinterpret_cast<const char*>(&size), sizeof(size));
    key.append(bytes.begin(), bytes.end());
  }
  return key;
}

std::uint32_t PrimaryKeyIndex::add_file(IndexedFile file) {
  auto it = file_ordinals_.find(file.path);
  if (it != file_ordinals_.end()) return it->second;
  if (files_.size() >= std::numeric_limits<std::uint32_t>::max()) fail("primary-key index: too many data files");
  const auto ordinal = static_cast<std::uint32_t>(files_.size());
  file_ordinals_.emplace(file.path, ordinal);
  files_.push_back(std::move(file));
  return ordinal;
}

std::optional<PrimaryKeyIndex::Location> PrimaryKeyIndex::find(std::string_view key) const {
  auto it = locations_.find(key);
  if (it == locations_.end()) return std::nullopt;
  return it->second;
}

bool PrimaryKeyIndex::insert(std::string key, Location location) {
  return locations_.emplace(std::move(key), location).second;
}

void PrimaryKeyIndex::assign(std::string key, Location location) {
  locations_.insert_or_assign(std::move(key), location);
}

bool PrimaryKeyIndex::erase(std::string_view key) {
  auto it = locations_.find(key);
  if (it == locations_.end()) return false;
  locations_.erase(it);
  return true;
}

std::size_t PrimaryKeyIndex::memory_bytes() const {
  // libstdc++ hash node: next pointer, value, cached hash; plus malloc's 16-byte header.
  constexpr std::size_t kNodeBytes =
      sizeof(void*) + sizeof(std::pair<const std::string, Location>) + sizeof(std::size_t) + 16;
  std::size_t bytes = locations_.bucket_count() * sizeof(void*) + locations_.size() * kNodeBytes;
  for (const auto& [key, location] : locations_) {
    if (key.capacity() > 15) bytes += key.capacity() + 1 + 16;  // beyond the small-string buffer
  }
  for (const auto& file : files_) bytes += sizeof(IndexedFile) + file.path.capacity() + 2 * file.path.size();
  return bytes;
}

}  // namespace binberg::iceberg
