#include "test_support.h"

#include <cstdio>
#include <fstream>
#include <memory>

#include "core/error.h"

namespace binberg::avro::testing {

std::string run_fastavro_tool(const std::string& arguments) {
  const std::string command =
      fmt::format("'{}' '{}/fastavro_tool.py' {}", BINBERG_PYTHON, BINBERG_AVRO_TEST_DIR, arguments);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) fail("cannot run {}", command);
  std::string output;
  char buffer[4096];
  while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe.get())) output.append(buffer, got);
  if (const int status = pclose(pipe.release()); status != 0) fail("{} exited with status {}", command, status);
  return output;
}

std::string hex(std::string_view bytes) {
  std::string out;
  for (const char byte : bytes) out += fmt::format("{:02x}", static_cast<std::uint8_t>(byte));
  return out;
}

nlohmann::json to_plain(const Node& schema, const Value& value) {
  switch (schema.type) {
    case Type::kUnion: {
      const Union& chosen = value.as<Union>();
      return to_plain(*schema.branches.at(chosen.branch()), chosen.value());
    }
    case Type::kRecord: {
      nlohmann::json out = nlohmann::json::object();
      for (const Field& field : schema.fields) {
        out[field.name] = to_plain(*field.type, value.as<Record>().fields.at(field.position));
      }
      return out;
    }
    case Type::kArray: {
      nlohmann::json out = nlohmann::json::array();
      for (const Value& item : value.as<Array>()) out.push_back(to_plain(*schema.items, item));
      return out;
    }
    case Type::kMap: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, item] : value.as<Map>()) out[key] = to_plain(*schema.items, item);
      return out;
    }
    case Type::kEnum:
      return schema.symbols.at(value.as<Enum>().index);
    case Type::kBytes:
    case Type::kFixed: {
      const Bytes& bytes = value.as<Bytes>();
      return "hex:" + hex({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    }
    case Type::kNull:
      return nullptr;
    case Type::kBoolean:
      return value.as<bool>();
    case Type::kInt:
      return value.as<std::int32_t>();
    case Type::kLong:
      return value.as<std::int64_t>();
    case Type::kFloat:
      return static_cast<double>(value.as<float>());
    case Type::kDouble:
      return value.as<double>();
    case Type::kString:
      return value.as<std::string>();
  }
  return nullptr;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) fail("cannot write {}", path.string());
}

}  // namespace binberg::avro::testing
