// Avro throughput for Debezium-style change events in the Confluent wire format (magic byte, schema
// id, datum): encode, decode with the writer schema, and decode resolved to a reader schema that adds
// a field with a default. The envelope has nullable `before`/`after` rows of 12 columns (long, int,
// string, decimal bytes, timestamp-micros, nullable timestamp-millis/date/string/double/int, boolean),
// a `source` record, `op` and `ts_ms`; events are 40% creates, 50% updates, 10% deletes.
// One thread, no I/O; prints figures and never asserts on time.
//
//   bench/avro_bench [--records N] [--passes K]

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "avro/encoding.h"
#include "avro/resolution.h"
#include "avro/schema.h"
#include "avro/value.h"
#include "avro/wire_format.h"
#include "core/error.h"

using namespace binberg;
using namespace binberg::avro;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The row record; `extra` adds fields (the reader schema's evolution).
std::string envelope_schema(const std::string& extra) {
  return R"({"type": "record", "name": "Envelope", "namespace": "shop.inventory.orders", "fields": [
    {"name": "before", "type": ["null", {"type": "record", "name": "Value", "fields": [
      {"name": "id", "type": "long"},
      {"name": "customer_id", "type": "int"},
      {"name": "status", "type": "string"},
      {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2,
                                  "connect.name": "org.apache.kafka.connect.data.Decimal"}},
      {"name": "quantity", "type": ["null", "int"], "default": null},
      {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
      {"name": "updated_at", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": null},
      {"name": "ship_date", "type": ["null", {"type": "int", "logicalType": "date"}], "default": null},
      {"name": "note", "type": ["null", "string"], "default": null},
      {"name": "weight_kg", "type": ["null", "double"], "default": null},
      {"name": "is_gift", "type": "boolean"},
      {"name": "sku", "type": "string"})" +
         extra + R"(
    ]}], "default": null},
    {"name": "after", "type": ["null", "Value"], "default": null},
    {"name": "source", "type": {"type": "record", "name": "Source", "namespace": "io.debezium.connector.mysql",
     "fields": [
      {"name": "version", "type": "string"},
      {"name": "connector", "type": "string"},
      {"name": "name", "type": "string"},
      {"name": "ts_ms", "type": "long"},
      {"name": "snapshot", "type": [{"type": "string", "connect.name": "io.debezium.data.Enum"}, "null"],
       "default": "false"},
      {"name": "db", "type": "string"},
      {"name": "table", "type": ["null", "string"], "default": null},
      {"name": "server_id", "type": "long"},
      {"name": "gtid", "type": ["null", "string"], "default": null},
      {"name": "file", "type": "string"},
      {"name": "pos", "type": "long"},
      {"name": "row", "type": "int"},
      {"name": "thread", "type": ["null", "long"], "default": null}]}},
    {"name": "op", "type": "string"},
    {"name": "ts_ms", "type": ["null", "long"], "default": null}]})";
}

// Big-endian two's complement, the fewest bytes that hold the value (the decimal encoding).
Bytes decimal_bytes(std::int64_t unscaled) {
  Bytes out;
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(unscaled >> shift));
  while (out.size() > 1 && ((out[0] == 0x00 && (out[1] & 0x80) == 0) || (out[0] == 0xff && (out[1] & 0x80) != 0))) {
    out.erase(out.begin());
  }
  return out;
}

Value row(std::int64_t id, int version) {
  const std::int64_t created_us = 1'764'670'000'000'000 + id * 1'000'003;
  const bool sparse = id % 3 == 0;  // every third row leaves the nullable columns null
  return Record{{
      Value(id),
      Value(static_cast<std::int32_t>(id % 50'000)),
      Value(version == 0 ? "pending" : "shipped"),
      Value(decimal_bytes(id * 137 % 10'000'000 + version)),
      sparse ? Value(Union(0, Value())) : Value(Union(1, Value(static_cast<std::int32_t>(1 + id % 20)))),
      Value(created_us),
      version == 0 ? Value(Union(0, Value())) : Value(Union(1, Value(created_us / 1000 + 3'600'000))),
      sparse ? Value(Union(0, Value())) : Value(Union(1, Value(static_cast<std::int32_t>(20'424 + id % 30)))),
      sparse ? Value(Union(0, Value()))
             : Value(Union(1, Value(fmt::format("leave at the door, order {} (gift wrap: {})", id, id % 2 == 0)))),
      sparse ? Value(Union(0, Value())) : Value(Union(1, Value(0.25 + static_cast<double>(id % 400) / 8))),
      Value(id % 7 == 0),
      Value(fmt::format("SKU-{:08}", id * 7 % 100'000'000)),
  }};
}

Value envelope(std::int64_t i) {
  const std::int64_t id = 1'000'000 + i;
  const int kind = static_cast<int>(i % 10);  // 0-3 create, 4-8 update, 9 delete
  const char* op = kind < 4 ? "c" : kind < 9 ? "u" : "d";
  const Value none = Union(0, Value());
  const Value before = kind < 4 ? none : Value(Union(1, row(id, 0)));
  const Value after = kind == 9 ? none : Value(Union(1, row(id, kind < 4 ? 0 : 1)));
  const std::int64_t ts_ms = 1'764'670'000'000 + i;
  const Value source = Record{{
      Value("2.7.3.Final"),
      Value("mysql"),
      Value("shop"),
      Value(ts_ms - 5),
      Value(Union(0, Value("false"))),
      Value("inventory"),
      Value(Union(1, Value("orders"))),
      Value(std::int64_t{223344}),
      Value(Union(1, Value(fmt::format("3e11fa47-71ca-11e1-9e33-c80aa9429562:{}", 10'000 + i)))),
      Value("mysql-bin.000003"),
      Value(std::int64_t{154} + i * 420),
      Value(std::int32_t{0}),
      Value(Union(1, Value(std::int64_t{7}))),
  }};
  return Record{{before, after, source, Value(op), Value(Union(1, Value(ts_ms)))}};
}

struct Pass {
  double seconds = 0;
  std::size_t bytes = 0;
};

void report(const char* what, std::size_t records, const Pass& best, long passes) {
  fmt::print("{:<42} {:>10.0f} records/s {:>8.1f} MB/s  (best of {} passes, {:.3f} s each)\n", what,
             static_cast<double>(records) / best.seconds, static_cast<double>(best.bytes) / best.seconds / 1e6, passes,
             best.seconds);
}

template <typename Body>
Pass best_of(long passes, Body&& body) {
  Pass best;
  for (long pass = 0; pass < passes; ++pass) {
    const auto start = Clock::now();
    const std::size_t bytes = body();
    const double seconds = seconds_since(start);
    if (pass == 0 || seconds < best.seconds) best = {seconds, bytes};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  long records = 100'000;
  long passes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--records") {
      records = std::atol(argv[i + 1]);
    } else if (flag == "--passes") {
      passes = std::atol(argv[i + 1]);
    } else {
      fmt::print(stderr, "unknown flag {}\n", flag);
      return 2;
    }
  }
  if (records <= 0 || passes <= 0) {
    fmt::print(stderr, "avro_bench: --records and --passes must be positive\n");
    return 2;
  }
  try {
    const Schema writer = Schema::parse(envelope_schema(""));
    // Evolution: the consumer's schema has a column the producer does not write yet.
    const Schema reader = Schema::parse(envelope_schema(R"(,
      {"name": "region", "type": "string", "default": "eu-west-1"})"));
    const std::int32_t schema_id = 42;
    const SchemaLookup lookup = [&](std::int32_t id) -> std::optional<Schema> {
      if (id == schema_id) return writer;
      return std::nullopt;
    };
    const Resolver resolver(writer, reader);

    std::vector<Value> values;
    values.reserve(static_cast<std::size_t>(records));
    for (long i = 0; i < records; ++i) values.push_back(envelope(i));
    std::vector<std::string> messages(values.size());

    const Pass encoded = best_of(passes, [&] {
      std::size_t bytes = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        messages[i] = encode_wire_message(schema_id, writer, values[i]);
        bytes += messages[i].size();
      }
      return bytes;
    });
    // Not timed: the decoded values must be the encoded ones, and the resolved ones must carry the default.
    for (std::size_t i = 0; i < values.size(); i += 997) {
      if (decode_wire_message(messages[i], lookup) != values[i]) fail("decoded record {} differs from the encoded", i);
      const Value resolved = resolver.read(parse_wire_message(messages[i]).datum);
      const Value& after = resolved.as<Record>().fields[1];
      if (after.as<Union>().branch() == 1 &&
          after.as<Union>().value().as<Record>().fields.back() != Value("eu-west-1")) {
        fail("resolved record {} lacks the default of the added field", i);
      }
    }

    std::size_t checksum = 0;  // keeps the decoded values observable
    const Pass decoded = best_of(passes, [&] {
      std::size_t bytes = 0;
      for (const std::string& message : messages) {
        const Value value = decode_wire_message(message, lookup);
        checksum += value.as<Record>().fields.size();
        bytes += message.size();
      }
      return bytes;
    });
    const Pass resolved = best_of(passes, [&] {
      std::size_t bytes = 0;
      for (const std::string& message : messages) {
        const WireMessage wire = parse_wire_message(message);
        if (wire.schema_id != schema_id) fail("unexpected schema id {}", wire.schema_id);
        const Value value = resolver.read(wire.datum);
        checksum += value.as<Record>().fields.size();
        bytes += message.size();
      }
      return bytes;
    });

    fmt::print(
        "avro_bench: {} Debezium-style change events (40% c, 50% u, 10% d), {:.1f} bytes each on average "
        "in the Confluent wire format, 1 thread\n",
        records, static_cast<double>(encoded.bytes) / static_cast<double>(records));
    report("encode (value -> wire message)", values.size(), encoded, passes);
    report("decode (wire message -> value)", values.size(), decoded, passes);
    report("decode resolved (reader adds a field)", values.size(), resolved, passes);
    if (checksum == 0) fmt::print("(no fields decoded)\n");
  } catch (const Error& e) {
    fmt::print(stderr, "avro_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
