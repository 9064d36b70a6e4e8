#include "tables/schema_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "iceberg/schema_evolution.h"
#include "mysql/text_value.h"
#include "tables/table_mapping.h"

namespace binberg::tables {
namespace {

using mysql::ColumnChange;
using mysql::ExistingRowsValue;

int integer_rank(SourceType type) {
  switch (type) {
    case SourceType::kTinyInt:
      return 1;
    case SourceType::kSmallInt:
      return 2;
    case SourceType::kMediumInt:
      return 3;
    case SourceType::kInt:
      return 4;
    case SourceType::kBigInt:
      return 5;
    default:
      return 0;
  }
}

// Character and binary string families in the order a value may move without change: CHAR pads
// and trims trailing spaces (BINARY pads with zero bytes), so only CHAR -> VARCHAR -> TEXT.
int string_rank(SourceType type) {
  switch (type) {
    case SourceType::kChar:
    case SourceType::kBinary:
      return 1;
    case SourceType::kVarchar:
    case SourceType::kVarbinary:
      return 2;
    case SourceType::kText:
    case SourceType::kBlob:
      return 3;
    default:
      return 0;
  }
}

bool is_binary_string(SourceType type) {
  return type == SourceType::kBinary || type == SourceType::kVarbinary || type == SourceType::kBlob;
}

// COLUMN as its declared TYPE ("INT UNSIGNED", "DECIMAL(12,2)", "VARCHAR(20)") describes it: for a
// column a later statement removed again, whose definition the server no longer has. Only what the
// Iceberg mapping needs; the rows that follow are checked against it as every row is.
std::optional<Column> declared_column(const std::string& name, const std::string& type, bool not_null) {
  std::string upper;
  for (char c : type) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  const std::size_t word_end = std::min(upper.find_first_of(" ("), upper.size());
  const std::string word = upper.substr(0, word_end);
  std::vector<std::uint32_t> args;
  if (const auto open = upper.find('('); open != std::string::npos && upper.find('\'') == std::string::npos) {
    std::uint32_t value = 0;
    bool digits = false;
    for (std::size_t i = open + 1; i < upper.size() && upper[i] != ')'; ++i) {
      if (upper[i] >= '0' && upper[i] <= '9') {
        value = value * 10 + static_cast<std::uint32_t>(upper[i] - '0');
        digits = true;
      } else if (upper[i] == ',') {
        args.push_back(value);
        value = 0;
      }
    }
    if (digits) args.push_back(value);
  }
  const auto arg = [&](std::size_t i, std::uint32_t otherwise) { return i < args.size() ? args[i] : otherwise; };
  static const std::map<std::string, SourceType> kTypes = {
      {"TINYINT", SourceType::kTinyInt},   {"BOOL", SourceType::kTinyInt},        {"BOOLEAN", SourceType::kTinyInt},
      {"SMALLINT", SourceType::kSmallInt}, {"MEDIUMINT", SourceType::kMediumInt}, {"INT", SourceType::kInt},
      {"INTEGER", SourceType::kInt},       {"BIGINT", SourceType::kBigInt},       {"FLOAT", SourceType::kFloat},
      {"DOUBLE", SourceType::kDouble},     {"REAL", SourceType::kDouble},         {"DECIMAL", SourceType::kDecimal},
      {"NUMERIC", SourceType::kDecimal},   {"DEC", SourceType::kDecimal},         {"FIXED", SourceType::kDecimal},
      {"BIT", SourceType::kBit},           {"YEAR", SourceType::kYear},           {"DATE", SourceType::kDate},
      {"TIME", SourceType::kTime},         {"DATETIME", SourceType::kDateTime},   {"TIMESTAMP", SourceType::kTimestamp},
      {"CHAR", SourceType::kChar},         {"VARCHAR", SourceType::kVarchar},     {"TINYTEXT", SourceType::kText},
      {"TEXT", SourceType::kText},         {"MEDIUMTEXT", SourceType::kText},     {"LONGTEXT", SourceType::kText},
      {"JSON", SourceType::kText},         {"BINARY", SourceType::kBinary},       {"VARBINARY", SourceType::kVarbinary},
      {"TINYBLOB", SourceType::kBlob},     {"BLOB", SourceType::kBlob},           {"MEDIUMBLOB", SourceType::kBlob},
      {"LONGBLOB", SourceType::kBlob},     {"ENUM", SourceType::kEnum},           {"SET", SourceType::kSet},
  };
  const auto it = kTypes.find(word);
  if (it == kTypes.end()) return std::nullopt;
  Column column;
  column.name = name;
  column.type = it->second;
  column.nullable = !not_null;
  column.is_unsigned = upper.find("UNSIGNED") != std::string::npos || upper.find("ZEROFILL") != std::string::npos;
  if (column.type == SourceType::kFloat && arg(0, 0) > 24) column.type = SourceType::kDouble;
  if (column.type == SourceType::kDecimal) {
    column.precision = arg(0, 10);
    column.scale = arg(1, 0);
  } else if (column.type == SourceType::kBit) {
    column.precision = arg(0, 1);
  } else if (column.type == SourceType::kTime || column.type == SourceType::kDateTime ||
             column.type == SourceType::kTimestamp) {
    column.precision = arg(0, 0);
  }
  return column;
}

std::string describe(const Column& column) {
  std::string text = to_string(column.type);
  if (column.type == SourceType::kDecimal) text += fmt::format("({},{})", column.precision, column.scale);
  if (string_rank(column.type) != 0) text += fmt::format("({} bytes, {})", column.max_bytes, column.charset);
  if (column.is_unsigned) text += " UNSIGNED";
  return text;
}

// A DEFAULT literal of a DECIMAL(p,SCALE) column in the source's canonical form ("5" -> "5.00"):
// what the server stores. More fractional digits than SCALE would be rounded: refused.
std::string decimal_literal(const std::string& text, std::uint32_t scale) {
  std::string sign, digits = text;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    if (digits[0] == '-') sign = "-";
    digits.erase(0, 1);
  }
  const std::size_t dot = digits.find('.');
  std::string integer = digits.substr(0, dot), fraction = dot == std::string::npos ? "" : digits.substr(dot + 1);
  const auto all_digits = [](const std::string& part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((integer.empty() && fraction.empty()) || !all_digits(integer) || !all_digits(fraction) ||
      fraction.size() > scale) {
    fail("'{}' is not a decimal with at most {} fractional digits", text, scale);
  }
  integer.erase(0, std::min(integer.find_first_not_of('0'), integer.size()));
  if (integer.empty()) integer = "0";
  fraction.resize(scale, '0');
  const bool zero = integer == "0" && fraction.find_first_not_of('0') == std::string::npos;
  return (zero ? "" : sign) + integer + (scale > 0 ? "." + fraction : "");
}

// Builds the next version of one Iceberg schema: fields keep their ids through renames and
// type promotions, new columns get fresh ids.
class SchemaBuilder {
 public:
  SchemaBuilder(const iceberg::Schema& current, std::int32_t last_column_id, bool accepted, const TypeMapping& types)
      : current_(current),
        next_id_(std::max(last_column_id, current.highest_field_id()) + 1),
        accepted_(accepted),
        types_(types) {}

  // The field for COLUMN, which was ORIGINAL_NAME in CURRENT (empty: a new column).
  iceberg::NestedField field(const TableSchema& table, const Column& column, const std::string& name,
                             const std::string& original_name, bool required) {
    const iceberg::NestedField* old = original_name.empty() ? nullptr : current_.find_field(original_name);
    const iceberg::TypePtr type = iceberg_type(table, column, old ? mapping_held(column, *old->type, types_) : types_);
    if (old == nullptr) return iceberg::NestedField{next_id_++, name, false, type, std::nullopt};
    iceberg::TypePtr kept = type;
    if (!iceberg::is_valid_promotion(*old->type, *type)) {
      if (!accepted_ || !iceberg::is_valid_promotion(*type, *old->type)) {
        throw SchemaChangeRefused(fmt::format("table {} column {}: Iceberg cannot change {} into {}",
                                              table.qualified_name(), column.name, old->type->to_string(),
                                              type->to_string()));
      }
      kept = old->type;  // accepted narrowing: the new values still fit the wider field
    }
    return iceberg::NestedField{old->id, name, old->required && required, kept, old->doc};
  }

 private:
  const iceberg::Schema& current_;
  std::int32_t next_id_;
  bool accepted_;
  TypeMapping types_;
};

[[noreturn]] void refuse(const TableSchema& table, const ColumnChange& change, const std::string& why) {
  throw SchemaChangeRefused(fmt::format("table {}: '{}' {}", table.qualified_name(), change.text, why));
}

}  // namespace

std::optional<std::string> lossy_change(const Column& old_column, const Column& new_column) {
  if (old_column.nullable && !new_column.nullable) {
    return "NULL -> NOT NULL: the source may have replaced existing NULLs";
  }
  const SourceType from = old_column.type, to = new_column.type;
  const auto type_change = [&] { return fmt::format("{} -> {}", describe(old_column), describe(new_column)); };
  if (integer_rank(from) != 0 || integer_rank(to) != 0) {
    if (integer_rank(from) == 0 || integer_rank(to) < integer_rank(from) ||
        old_column.is_unsigned != new_column.is_unsigned) {
      return type_change() + " can change or clip values";
    }
    return std::nullopt;
  }
  if (from == SourceType::kFloat && (to == SourceType::kFloat || to == SourceType::kDouble)) return std::nullopt;
  if (from == SourceType::kDecimal && to == SourceType::kDecimal) {
    if (new_column.scale == old_column.scale && new_column.precision >= old_column.precision &&
        old_column.is_unsigned == new_column.is_unsigned) {
      return std::nullopt;
    }
    return type_change() + " can round or clip values";
  }
  if (string_rank(from) != 0 && string_rank(to) != 0) {
    const bool same_family = is_binary_string(from) == is_binary_string(to);
    const bool moves_forward = string_rank(to) > string_rank(from) || from == to;
    if (same_family && moves_forward && old_column.charset == new_column.charset &&
        new_column.max_bytes >= old_column.max_bytes) {
      return std::nullopt;
    }
    return type_change() + " can truncate, pad or convert values";
  }
  if ((from == SourceType::kEnum || from == SourceType::kSet) && to == from) {
    const auto& a = old_column.symbols;
    const auto& b = new_column.symbols;
    if (b.size() >= a.size() && std::equal(a.begin(), a.end(), b.begin())) return std::nullopt;
    return fmt::format("{} values reordered or removed: stored values can change meaning", to_string(from));
  }
  if (from == to && (from == SourceType::kTime || from == SourceType::kDateTime || from == SourceType::kTimestamp ||
                     from == SourceType::kBit)) {
    if (new_column.precision >= old_column.precision) return std::nullopt;
    return type_change() +
           fmt::format(" with precision {} -> {} can round values", old_column.precision, new_column.precision);
  }
  if (from == to && from != SourceType::kDecimal) return std::nullopt;  // DATE, YEAR, DOUBLE, JSON, GEOMETRY
  return type_change() + " converts values";
}

std::optional<Value> existing_rows_value(const TableSchema& table, const Column& column,
                                         const mysql::ExistingRowsValue& existing_rows) {
  const std::string where = fmt::format("table {}: ADD COLUMN {}", table.qualified_name(), column.name);
  switch (existing_rows.kind) {
    case ExistingRowsValue::Kind::kNull:
      return std::nullopt;
    case ExistingRowsValue::Kind::kLiteral: {
      try {
        if (column.type == SourceType::kDecimal) return Decimal{decimal_literal(existing_rows.text, column.scale)};
        if (column.type == SourceType::kTimestamp) {
          fail(
              "a TIMESTAMP literal is read in the session time zone of the statement, which the binlog does not "
              "give");
        }
        return mysql::parse_text_value(column, existing_rows.text);
      } catch (const Error& error) {
        throw SchemaChangeRefused(fmt::format("{}: its DEFAULT '{}' is not a value binberg can read ({})", where,
                                              existing_rows.text, error.what()));
      }
    }
    case ExistingRowsValue::Kind::kImplicit:
      if (integer_rank(column.type) != 0 || column.type == SourceType::kDecimal || column.type == SourceType::kFloat ||
          column.type == SourceType::kDouble || column.type == SourceType::kBit) {
        if (column.type == SourceType::kDecimal) return Decimal{decimal_literal("0", column.scale)};
        return mysql::parse_text_value(column, "0");
      }
      if (column.type == SourceType::kEnum && !column.symbols.empty()) return Text{column.symbols.front()};
      if (column.type == SourceType::kVarchar || column.type == SourceType::kText || column.type == SourceType::kSet)
        return Text{""};
      if (column.type == SourceType::kVarbinary || column.type == SourceType::kBlob) return Bytes{""};
      throw SchemaChangeRefused(fmt::format(
          "{}: NOT NULL without DEFAULT gives existing rows the implicit default of {}, which binberg does not "
          "reproduce; add the column with an explicit DEFAULT",
          where, to_string(column.type)));
    case ExistingRowsValue::Kind::kUnknown:
      break;
  }
  throw SchemaChangeRefused(fmt::format(
      "{}: the existing rows get values the source computes ({}), which are not in the binlog; add the column "
      "with a constant DEFAULT, then fill it with UPDATE statements",
      where, existing_rows.text));
}

namespace {

// A column after the statement, with the name it had in the Iceberg tables (empty: new).
struct PlannedColumn {
  Column column;
  std::string original_name;
};

// The source table's columns and key as INPUT's statement leaves them, one column change after
// the other; refuses (SchemaChangeRefused) what the tables cannot follow.
class ColumnEdits {
 public:
  explicit ColumnEdits(const SchemaChangeInput& input) : input_(input), before_(*input.before), now_(*input.now) {
    for (const Column& column : before_.columns) columns_.push_back(PlannedColumn{column, column.name});
    for (std::size_t c : before_.primary_key) key_.push_back(before_.columns[c].name);
  }

  void apply(const ColumnChange& change, SchemaChangePlan& plan) {
    switch (change.kind) {
      case ColumnChange::Kind::kIndexOrOption:
      case ColumnChange::Kind::kSetDefault:
        return;
      case ColumnChange::Kind::kAdd: {
        if (find(change.column) != columns_.end()) return;  // ADD IF NOT EXISTS of a column that exists
        Column column = definition_now(change, change.column);
        if (std::optional<Value> value = existing_rows_value(before_, column, change.existing_rows)) {
          plan.existing_rows.emplace_back(column.name, std::move(*value));
        }
        columns_.push_back(PlannedColumn{std::move(column), ""});
        plan.changes_tables = true;
        return;
      }
      case ColumnChange::Kind::kDrop: {
        const auto it = find(change.column);
        if (it == columns_.end()) return;  // DROP IF EXISTS of a column that does not
        if (is_key(change.column)) refuse(before_, change, "drops a primary-key column");
        columns_.erase(it);
        plan.changes_tables = true;
        return;
      }
      case ColumnChange::Kind::kRename:
      case ColumnChange::Kind::kModify:
        rename_or_modify(change);
        plan.changes_tables = true;
        return;
      case ColumnChange::Kind::kPrimaryKey:
        refuse(before_, change, "changes the primary key, which the current-state table is keyed on");
      case ColumnChange::Kind::kRenameTable:
        refuse(before_, change, "renames the table; capture it under its new name with a fresh start");
      case ColumnChange::Kind::kUnknown:
        refuse(before_, change, "is not a change binberg knows how to apply");
    }
  }

  // The columns in source order as the server has it now (columns a later statement dropped keep
  // their place at the end), named as the server spells them now (the statement may have spelled
  // them otherwise).
  std::vector<PlannedColumn> columns() {
    for (PlannedColumn& e : columns_) {
      if (const auto c = now_.find_column(e.column.name)) e.column.name = now_.columns[*c].name;
    }
    std::stable_sort(columns_.begin(), columns_.end(), [&](const PlannedColumn& a, const PlannedColumn& b) {
      const auto position = [&](const PlannedColumn& e) { return now_.column_index(e.column.name).value_or(SIZE_MAX); };
      return position(a) < position(b);
    });
    return columns_;
  }
  std::vector<std::string> key() const {
    std::vector<std::string> key = key_;
    for (std::string& k : key) {
      if (const auto c = now_.find_column(k)) k = now_.columns[*c].name;
    }
    return key;
  }
  bool is_key(const std::string& name) const {
    return std::any_of(key_.begin(), key_.end(), [&](const std::string& k) { return same_column_name(k, name); });
  }

 private:
  // DDL may spell a column in another case than its definition: names compare as the server's do.
  std::vector<PlannedColumn>::iterator find(const std::string& name) {
    return std::find_if(columns_.begin(), columns_.end(),
                        [&](const PlannedColumn& e) { return same_column_name(e.column.name, name); });
  }

  Column definition_now(const ColumnChange& change, const std::string& name) const {
    if (const auto c = now_.find_column(name)) return now_.columns[*c];
    // A later statement removed or renamed it: the declaration is all there is.
    std::optional<Column> declared = declared_column(name, change.type, change.not_null);
    if (!declared || (change.kind == ColumnChange::Kind::kModify && !input_.accepted)) {
      refuse(before_, change,
             fmt::format("names column {}, which the source table no longer has (a later statement changed it), "
                         "so binberg cannot read its full definition to judge the change; accept it with "
                         "--accept-schema-change if it kept every value",
                         name));
    }
    return *declared;
  }

  void rename_or_modify(const ColumnChange& change) {
    const auto it = find(change.column);
    if (it == columns_.end()) refuse(before_, change, fmt::format("names unknown column {}", change.column));
    if (!same_column_name(change.new_name, change.column) && find(change.new_name) != columns_.end()) {
      refuse(before_, change, fmt::format("renames onto existing column {}", change.new_name));
    }
    if (change.kind == ColumnChange::Kind::kModify) {
      Column next = definition_now(change, change.new_name);
      if (auto why = lossy_change(it->column, next); why && !input_.accepted) {
        refuse(before_, change,
               *why +
                   "; if you know it did not (strict SQL mode refuses lossy changes), accept it with "
                   "--accept-schema-change");
      }
      if (is_key(change.column)) {
        // The table is keyed on the type its field holds, whatever [types] says now.
        const iceberg::NestedField* field = input_.changelog->find_field(it->original_name);
        const TypeMapping held = field ? mapping_held(it->column, *field->type, input_.types) : input_.types;
        if (iceberg_type(before_, it->column, held)->to_string() != iceberg_type(before_, next, held)->to_string()) {
          refuse(before_, change, "changes the type of a primary-key column, which the table is keyed on");
        }
      }
      it->column = std::move(next);
    }
    for (auto& k : key_) {
      if (same_column_name(k, change.column)) k = change.new_name;
    }
    it->column.name = change.new_name;
  }

  const SchemaChangeInput& input_;
  const TableSchema& before_;
  const TableSchema& now_;
  std::vector<PlannedColumn> columns_;
  std::vector<std::string> key_;
};

iceberg::Schema evolved_state_schema(const SchemaChangeInput& input, const TableSchema& source,
                                     const std::vector<PlannedColumn>& columns, const ColumnEdits& edits,
                                     const std::vector<std::string>& key) {
  SchemaBuilder builder(*input.state, input.state_last_column_id, input.accepted, input.types);
  std::vector<iceberg::NestedField> fields;
  std::vector<std::int32_t> identifiers;
  for (const PlannedColumn& planned : columns) {
    fields.push_back(builder.field(source, planned.column, planned.column.name, planned.original_name,
                                   edits.is_key(planned.column.name) || !planned.column.nullable));
  }
  for (const std::string& name : key) {
    for (const auto& field : fields) {
      if (field.name == name) identifiers.push_back(field.id);
    }
  }
  return iceberg::Schema(input.state->schema_id(), std::move(fields), std::move(identifiers));
}

iceberg::Schema evolved_changelog_schema(const SchemaChangeInput& input, const TableSchema& source,
                                         const std::vector<PlannedColumn>& columns) {
  SchemaBuilder builder(*input.changelog, input.changelog_last_column_id, input.accepted, input.types);
  std::vector<iceberg::NestedField> fields(input.changelog->fields().begin(),
                                           input.changelog->fields().begin() + kChangelogMetadataColumns);
  for (const bool before_image : {false, true}) {
    const std::string prefix = before_image ? std::string(kBeforeImagePrefix) : "";
    for (const PlannedColumn& e : columns) {
      fields.push_back(builder.field(source, e.column, prefix + e.column.name,
                                     e.original_name.empty() ? "" : prefix + e.original_name, false));
    }
  }
  // The history of columns the source dropped (now or before) stays, null from here on; a column
  // added again under a dropped one's name is a new field, the old one is renamed out of its way.
  const auto has = [&](auto predicate) { return std::any_of(fields.begin(), fields.end(), predicate); };
  for (const iceberg::NestedField& old : input.changelog->fields()) {
    if (has([&](const auto& f) { return f.id == old.id; })) continue;
    const bool name_taken = has([&](const auto& f) { return f.name == old.name; });
    fields.push_back(iceberg::NestedField{
        old.id, name_taken ? fmt::format("{}__dropped_{}", old.name, old.id) : old.name, false, old.type, old.doc});
  }
  return iceberg::Schema(input.changelog->schema_id(), std::move(fields));
}

}  // namespace

SchemaChangePlan plan_schema_change(const SchemaChangeInput& input) {
  SchemaChangePlan plan;
  ColumnEdits edits(input);
  for (const ColumnChange& change : input.statement->changes) edits.apply(change, plan);
  const std::vector<PlannedColumn> columns = edits.columns();
  const std::vector<std::string> key = edits.key();
  auto source = std::make_shared<TableSchema>();
  source->database = input.before->database;
  source->table = input.before->table;
  for (const PlannedColumn& e : columns) source->columns.push_back(e.column);
  for (const std::string& name : key) source->primary_key.push_back(*source->find_column(name));
  plan.source = source;
  check_changelog_names(*source);
  if (input.state != nullptr) plan.state.emplace(evolved_state_schema(input, *source, columns, edits, key));
  plan.changelog = evolved_changelog_schema(input, *source, columns);
  return plan;
}

nlohmann::json table_schema_to_json(const TableSchema& schema) {
  nlohmann::json columns = nlohmann::json::array();
  for (const Column& c : schema.columns) {
    columns.push_back({{"name", c.name},
                       {"type", to_string(c.type)},
                       {"nullable", c.nullable},
                       {"unsigned", c.is_unsigned},
                       {"precision", c.precision},
                       {"scale", c.scale},
                       {"max-bytes", c.max_bytes},
                       {"charset", c.charset},
                       {"symbols", c.symbols}});
  }
  return {{"database", schema.database},
          {"table", schema.table},
          {"columns", columns},
          {"primary-key", schema.primary_key}};
}

std::shared_ptr<const TableSchema> table_schema_from_json(const nlohmann::json& json) {
  try {
    auto schema = std::make_shared<TableSchema>();
    schema->database = json.at("database").get<std::string>();
    schema->table = json.at("table").get<std::string>();
    for (const auto& c : json.at("columns")) {
      Column column;
      column.name = c.at("name").get<std::string>();
      const std::string type = c.at("type").get<std::string>();
      bool known = false;
      for (int t = 0; t <= static_cast<int>(SourceType::kGeometry) && !known; ++t) {
        if (type == to_string(static_cast<SourceType>(t))) {
          column.type = static_cast<SourceType>(t);
          known = true;
        }
      }
      if (!known) fail("unknown column type '{}'", type);
      column.nullable = c.at("nullable").get<bool>();
      column.is_unsigned = c.at("unsigned").get<bool>();
      column.precision = c.at("precision").get<std::uint32_t>();
      column.scale = c.at("scale").get<std::uint32_t>();
      column.max_bytes = c.at("max-bytes").get<std::uint32_t>();
      column.charset = c.at("charset").get<std::string>();
      column.symbols = c.at("symbols").get<std::vector<std::string>>();
      schema->columns.push_back(std::move(column));
    }
    schema->primary_key = json.at("primary-key").get<std::vector<std::size_t>>();
    for (std::size_t k : schema->primary_key) {
      if (k >= schema->columns.size()) fail("primary-key column {} out of range", k);
    }
    return schema;
  } catch (const nlohmann::json::exception& error) {
    fail("the recorded source schema is malformed: {}", error.what());
  }
}

std::string PublishedSchemaChange::to_json() const {
  return nlohmann::json{
      {"database", database}, {"statement", statement}, {"now", now ? table_schema_to_json(*now) : nlohmann::json()}}
      .dump();
}

PublishedSchemaChange PublishedSchemaChange::parse(const std::string& text) {
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    PublishedSchemaChange change;
    change.database = json.at("database").get<std::string>();
    change.statement = json.at("statement").get<std::string>();
    if (!json.at("now").is_null()) change.now = table_schema_from_json(json.at("now"));
    return change;
  } catch (const nlohmann::json::exception& error) {
    fail("not a published schema change: {}", error.what());
  }
}

}  // namespace binberg::tables
