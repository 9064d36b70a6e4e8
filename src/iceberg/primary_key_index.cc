#include "iceberg/detail/primary_key_index.h"

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
  files_bytes_ += sizeof(IndexedFile) + 3 * file.path.size() + 64;
  files_.push_back(std::move(file));
  return ordinal;
}

std::optional<PrimaryKeyIndex::Location> PrimaryKeyIndex::find(std::string_view key) const {
  auto it = locations_.find(key);
  if (it == locations_.end()) return std::nullopt;
  return it->second;
}

namespace {
// Heap bytes a key holds beyond the string itself: nothing within the small-string buffer.
std::size_t key_heap_bytes(const std::string& key) { return key.capacity() > 15 ? key.capacity() + 1 + 16 : 0; }
}  // namespace

bool PrimaryKeyIndex::insert(std::string key, Location location) {
  const auto [it, inserted] = locations_.emplace(std::move(key), location);
  if (inserted) key_heap_bytes_ += key_heap_bytes(it->first);
  return inserted;
}

void PrimaryKeyIndex::assign(std::string key, Location location) {
  if (auto it = locations_.find(key); it != locations_.end()) {
    it->second = location;
    return;
  }
  insert(std::move(key), location);
}

bool PrimaryKeyIndex::erase(std::string_view key) {
  auto it = locations_.find(key);
  if (it == locations_.end()) return false;
  key_heap_bytes_ -= key_heap_bytes(it->first);
  locations_.erase(it);
  return true;
}

void PrimaryKeyIndex::clear_keys() {
  locations_ = {};
  key_heap_bytes_ = 0;
}

std::size_t PrimaryKeyIndex::memory_bytes() const {
  // libstdc++ hash node: next pointer, value, cached hash; plus malloc's 16-byte header.
  constexpr std::size_t kNodeBytes =
      sizeof(void*) + sizeof(std::pair<const std::string, Location>) + sizeof(std::size_t) + 16;
  std::size_t bytes = locations_.bucket_count() * sizeof(void*) + locations_.size() * kNodeBytes + key_heap_bytes_;
  bytes += files_bytes_;
  return bytes;
}

}  // namespace binberg::iceberg
