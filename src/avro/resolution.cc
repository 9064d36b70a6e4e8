#include "avro/resolution.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "core/error.h"

namespace binberg::avro {

namespace {

using NodePair = std::pair<const Node*, const Node*>;  // (writer, reader)

struct RecordPlan {
  // Per writer field, in wire order: the reader field it fills, or nullopt when the reader drops it.
  std::vector<std::optional<std::size_t>> reader_field;
  // Reader fields the writer lacks, filled from their defaults.
  std::vector<std::pair<std::size_t, Value>> defaults;
};

bool is_promotable(Type writer, Type reader) {
  switch (writer) {
    case Type::kInt:
      return reader == Type::kLong || reader == Type::kFloat || reader == Type::kDouble;
    case Type::kLong:
      return reader == Type::kFloat || reader == Type::kDouble;
    case Type::kFloat:
      return reader == Type::kDouble;
    case Type::kString:
      return reader == Type::kBytes;
    case Type::kBytes:
      return reader == Type::kString;
    default:
      return false;
  }
}

std::string_view unqualified(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// Named types match by unqualified name, or when the writer's name is one of the reader's aliases.
bool names_match(const Node& writer, const Node& reader) {
  if (writer.unqualified_name() == reader.unqualified_name()) return true;
  return std::any_of(reader.aliases.begin(), reader.aliases.end(), [&](const std::string& alias) {
    return alias == writer.name || unqualified(alias) == writer.unqualified_name();
  });
}

bool same_kind(const Node& writer, const Node& reader) {
  return writer.type == reader.type && (!writer.is_named() || names_match(writer, reader));
}

// The reader union branch data of a (non-union) writer type resolves to: an exact match first, then a promotion.
std::optional<std::size_t> reader_branch_for(const Node& writer, const Node& reader_union) {
  const auto& branches = reader_union.branches;
  for (const auto& matches : {same_kind, +[](const Node&w, const Node&r) { return is_promotable(w.type, r.type); }}) {
    for (std::size_t i = 0; i < branches.size(); ++i) {
      if (matches(writer, *branches[i])) return i;
    }
  }
  return std::nullopt;
}

std::string describe_path(const std::string& path) { return path.empty() ? "/" : path; }

}  // namespace

struct Resolver::Plan {
  Schema writer;
  Schema reader;
  std::map<NodePair, RecordPlan> records;
  std::map<NodePair, std::vector<std::size_t>> enums;  // writer symbol index -> reader symbol index
  std::map<NodePair, std::size_t> union_branches;      // (writer type, reader union) -> reader branch
};

namespace {

// Walks writer and reader schemas together, recording each problem and the plan to read what resolves.
class Analysis {
 public:
  explicit Analysis(Resolver::Plan& plan) : plan_(plan) {}

  void check(const Node& writer, const Node& reader, const std::string& path) {
    if (writer.type == Type::kUnion) {
      for (const Node* branch : writer.branches) check(*branch, reader, path);
      return;
    }
    if (reader.type == Type::kUnion) {
      const auto branch = reader_branch_for(writer, reader);
      if (!branch) {
        return problem(path,
                       fmt::format("reader {} has no branch for writer type {}", reader.describe(), writer.describe()));
      }
      plan_.union_branches[{&writer, &reader}] = *branch;
      return check(writer, *reader.branches[*branch], path);
    }
    if (writer.type != reader.type) {
      if (is_promotable(writer.type, reader.type)) return;
      return problem(
          path, fmt::format("reader type {} not compatible with writer type {}", reader.describe(), writer.describe()));
    }
    if (writer.is_named() && !names_match(writer, reader)) {
      return problem(
          path, fmt::format("reader {} does not match the name of writer {}", reader.describe(), writer.describe()));
    }
    switch (writer.type) {
      case Type::kRecord:
        return check_record(writer, reader, path);
      case Type::kEnum:
        return check_enum(writer, reader, path);
      case Type::kFixed:
        if (writer.fixed_size != reader.fixed_size) {
          problem(path + "/size", fmt::format("reader {} has size {}, writer {} has size {}", reader.describe(),
                                              reader.fixed_size, writer.describe(), writer.fixed_size));
        }
        return;
      case Type::kArray:
        return check(*writer.items, *reader.items, path + "/items");
      case Type::kMap:
        return check(*writer.items, *reader.items, path + "/values");
      default:
        return;
    }
  }

  std::vector<std::string> problems() && { return std::move(problems_); }

 private:
  void problem(const std::string& path, std::string message) {
    problems_.push_back(fmt::format("{}: {}", describe_path(path), message));
  }

  void check_record(const Node& writer, const Node& reader, const std::string& path) {
    // Recursive schemas revisit the same pair: its plan is already (being) built.
    const auto [it, is_new] = plan_.records.try_emplace({&writer, &reader});
    if (!is_new) return;
    RecordPlan record_plan;
    record_plan.reader_field.resize(writer.fields.size());
    for (const Field& reader_field : reader.fields) {
      const std::string field_path = fmt::format("{}/fields/{}", path, reader_field.name);
      const Field* writer_field = writer.find_field(reader_field.name);
      for (auto alias = reader_field.aliases.begin(); !writer_field && alias != reader_field.aliases.end(); ++alias) {
        writer_field = writer.find_field(*alias);
      }
      if (writer_field) {
        record_plan.reader_field[writer_field->position] = reader_field.position;
        check(*writer_field->type, *reader_field.type, field_path + "/type");
      } else if (reader_field.default_value) {
        record_plan.defaults.emplace_back(reader_field.position,
                                          value_from_json(*reader_field.type, *reader_field.default_value));
      } else {
        problem(field_path, fmt::format("reader field '{}' has no default and is missing from writer {}",
                                        reader_field.name, writer.describe()));
      }
    }
    plan_.records[{&writer, &reader}] = std::move(record_plan);
  }

  void check_enum(const Node& writer, const Node& reader, const std::string& path) {
    if (plan_.enums.contains({&writer, &reader})) return;
    std::vector<std::size_t> mapping;
    for (const std::string& symbol : writer.symbols) {
      auto index = reader.symbol_index(symbol);
      if (!index && reader.enum_default) index = reader.symbol_index(*reader.enum_default);
      if (!index) {
        problem(path + "/symbols",
                fmt::format("writer symbol '{}' is not in reader {}, which has no default", symbol, reader.describe()));
      }
      mapping.push_back(index.value_or(0));
    }
    plan_.enums[{&writer, &reader}] = std::move(mapping);
  }

  Resolver::Plan& plan_;
  std::vector<std::string> problems_;
};

Value read_resolved(const Resolver::Plan& plan, const Node& writer, const Node& reader, Decoder& decoder);

Value read_promoted(Type writer, Type reader, Decoder& decoder) {
  switch (reader) {
    case Type::kLong:
      return static_cast<std::int64_t>(decoder.read_int());
    case Type::kFloat:
      return writer == Type::kInt ? static_cast<float>(decoder.read_int()) : static_cast<float>(decoder.read_long());
    case Type::kDouble:
      if (writer == Type::kInt) return static_cast<double>(decoder.read_int());
      if (writer == Type::kLong) return static_cast<double>(decoder.read_long());
      return static_cast<double>(decoder.read_float());
    case Type::kString:  // bytes read as a string must be UTF-8 like any string
      return std::string(decoder.read_string());
    default: {
      const std::string_view bytes = decoder.read_bytes();
      return Bytes(bytes.begin(), bytes.end());
    }
  }
}

Value read_record(const Resolver::Plan& plan, const Node& writer, const Node& reader, Decoder& decoder) {
  const RecordPlan& record_plan = plan.records.at({&writer, &reader});
  Record record;
  record.fields.resize(reader.fields.size());
  // Error paths name the reader's fields, and the writer's name for fields the reader drops.
  for (const Field& writer_field : writer.fields) {
    if (const auto target = record_plan.reader_field[writer_field.position]) {
      const Field& reader_field = reader.fields[*target];
      with_decode_path(
          [&] { return "fields/" + reader_field.name; },
          [&] { record.fields[*target] = read_resolved(plan, *writer_field.type, *reader_field.type, decoder); });
    } else {
      with_decode_path([&] { return "fields/" + writer_field.name; }, [&] { skip(*writer_field.type, decoder); });
    }
  }
  for (const auto& [position, value] : record_plan.defaults) record.fields[position] = value;
  return record;
}

Value read_resolved(const Resolver::Plan& plan, const Node& writer, const Node& reader, Decoder& decoder) {
  const Decoder::Nesting nesting(decoder);
  if (writer.type == Type::kUnion) {
    const std::size_t branch = decoder.read_union_branch(writer.branches.size());
    return read_resolved(plan, *writer.branches[branch], reader, decoder);
  }
  if (reader.type == Type::kUnion) {
    const std::size_t branch = plan.union_branches.at({&writer, &reader});
    return Union(branch,
                 with_decode_path([&] { return std::to_string(branch); },
                                  [&] { return read_resolved(plan, writer, *reader.branches[branch], decoder); }));
  }
  if (writer.type != reader.type) return read_promoted(writer.type, reader.type, decoder);
  switch (reader.type) {
    case Type::kRecord:
      return read_record(plan, writer, reader, decoder);
    case Type::kEnum: {
      const std::size_t start = decoder.offset();
      const std::int32_t index = decoder.read_int();
      const auto& mapping = plan.enums.at({&writer, &reader});
      if (index < 0 || static_cast<std::size_t>(index) >= mapping.size()) {
        decoder.fail_at(start, fmt::format("enum index {} out of range for writer {}", index, writer.describe()));
      }
      return Enum{mapping[static_cast<std::size_t>(index)]};
    }
    case Type::kArray: {
      Array items;
      for_each_item(*writer.items, decoder, [&] {
        with_decode_path([&] { return std::to_string(items.size()); },
                         [&] { items.push_back(read_resolved(plan, *writer.items, *reader.items, decoder)); });
      });
      return items;
    }
    case Type::kMap: {
      Map entries;
      for_each_item(*writer.items, decoder, [&] {
        const std::size_t key_start = decoder.offset();
        std::string key(decoder.read_string());
        Value item = with_decode_path([&] { return key; },
                                      [&] { return read_resolved(plan, *writer.items, *reader.items, decoder); });
        if (!entries.emplace(std::move(key), std::move(item)).second) decoder.fail_at(key_start, "duplicate map key");
      });
      return entries;
    }
    default:  // identical primitives and fixed: the writer's encoding is the reader's
      return decode(reader, decoder);
  }
}

}  // namespace

std::vector<std::string> resolution_problems(const Node& writer, const Node& reader) {
  Resolver::Plan plan;
  Analysis analysis(plan);
  analysis.check(writer, reader, "");
  return std::move(analysis).problems();
}

Resolver::Resolver(Schema writer, Schema reader) {
  auto plan = std::make_shared<Plan>();
  plan->writer = std::move(writer);
  plan->reader = std::move(reader);
  Analysis analysis(*plan);
  analysis.check(plan->writer.root(), plan->reader.root(), "");
  const std::vector<std::string> problems = std::move(analysis).problems();
  if (!problems.empty()) {
    fail("avro resolution: the reader schema cannot read data of the writer schema: {}", fmt::join(problems, "; "));
  }
  plan_ = std::move(plan);
}

Value Resolver::read(Decoder& decoder) const {
  return read_resolved(*plan_, plan_->writer.root(), plan_->reader.root(), decoder);
}

Value Resolver::read(std::string_view datum) const {
  Decoder decoder(datum);
  Value value = read(decoder);
  decoder.expect_end();
  return value;
}

const Schema& Resolver::writer() const { return plan_->writer; }
const Schema& Resolver::reader() const { return plan_->reader; }

}  // namespace binberg::avro
