#include "core/change_event.h"

#include <fmt/format.h>

#include "core/error.h"

namespace binberg {

std::string make_event_id(const SourceInfo& source, Op op) {
  if (op == Op::kSnapshot) {
    return fmt::format("snapshot:{}:{}:{}.{}#{}", source.file, source.end_pos, source.database, source.table,
                       source.row_index);
  }
  if (!source.gtid.empty()) return fmt::format("{}#{}", source.gtid, source.row_index);
  return fmt::format("{}:{}#{}", source.file, source.end_pos, source.row_index);
}

RowImage primary_key_of(const TableSchema& schema, const RowImage& image) {
  if (image.size() != schema.columns.size()) {
    fail("{}: row image has {} values for {} columns", schema.qualified_name(), image.size(), schema.columns.size());
  }
  RowImage key;
  key.reserve(schema.primary_key.size());
  for (std::size_t index : schema.primary_key) key.push_back(image[index]);
  return key;
}

RowImage primary_key_of(const ChangeEvent& event) {
  return primary_key_of(*event.schema, event.after ? *event.after : *event.before);
}

}  // namespace binberg
