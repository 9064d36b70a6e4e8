#pragma once

// The primary-key index of a keyed table: for every live row, where it is (data file, position).
// The upsert writer turns a changed key into a position delete through it, so a reader never needs
// equality deletes. It is rebuilt from the table when a writer opens it and updated only after a
// commit succeeds, so it always describes exactly the table's current snapshot.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "iceberg/arrow_rows.h"
#include "iceberg/detail/literal.h"

namespace binberg::iceberg {

// A byte string equal for two rows exactly when their values are equal: each value as a presence
// byte, then (if not null) a 4-byte length and its single-value bytes. SCHEMA describes ROW.
std::string encode_key(const Schema& schema, const Row& row);

struct IndexedFile {
  std::string path;
  std::int32_t spec_id = 0;
  std::vector<Literal> partition;
};

class PrimaryKeyIndex {
 public:
  struct Location {
    std::uint32_t file = 0;  // ordinal in files()
    std::uint32_t position = 0;
  };

  // The ordinal of FILE, adding it if new.
  std::uint32_t add_file(IndexedFile file);
  const IndexedFile& file(std::uint32_t ordinal) const { return files_.at(ordinal); }

  std::optional<Location> find(std::string_view key) const;
  // Returns false (and changes nothing) when KEY is present already.
  bool insert(std::string key, Location location);
  void assign(std::string key, Location location);
  bool erase(std::string_view key);

  // Forgets every key, keeps the files (the writer's key-scan mode, table_writer.h).
  void clear_keys();

  std::size_t size() const { return locations_.size(); }
  // Estimated heap bytes: keys, hash nodes, buckets and file records. Constant time.
  std::size_t memory_bytes() const;

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_map<std::string, Location, KeyHash, std::equal_to<>> locations_;
  std::vector<IndexedFile> files_;
  std::unordered_map<std::string, std::uint32_t> file_ordinals_;
  std::size_t key_heap_bytes_ = 0, files_bytes_ = 0;
};

}  // namespace binberg::iceberg
