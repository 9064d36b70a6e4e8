#pragma once

// Real change records of one small table, made by binberg's own encoder (envelope/, avro/) with
// the headers binberg source gives them, and the schemas a registry would hold for them: what the
// record-judgement tests and the sink's fuzz target (fuzz/sink_record_fuzz.cc) start from. No I/O.

#include <cstdint>
#include <string>
#include <vector>

#include "kafka/consumer.h"

namespace binberg::sink::samples {

inline constexpr std::int32_t kValueSchemaId = 1;
inline constexpr std::int32_t kKeySchemaId = 2;
// A value schema whose binberg.table property is malformed (primary_key a number, not a list).
inline constexpr std::int32_t kMalformedTableSchemaId = 3;
// A value schema whose column descriptions do not match the Avro types of their fields.
inline constexpr std::int32_t kMismatchedColumnSchemaId = 4;

inline constexpr const char* kTopic = "cdc.shop.orders";

// The schema JSON held under ID; throws registry::RegistryError (404) for any other id.
std::string schema_by_id(std::int32_t id);

// Records of the table (id INT primary key, qty BIGINT, note VARCHAR(20) NULL) as binberg source
// produces them: an insert, an update, a delete, the two halves of a primary-key update, a schema
// change, in one transaction whose last record carries its footprint; each at its offset in
// partition 0 of kTopic.
std::vector<kafka::ConsumedRecord> records();

// RECORD with its value encoded under schema SCHEMA_ID instead (the same Avro body).
kafka::ConsumedRecord with_value_schema(kafka::ConsumedRecord record, std::int32_t schema_id);
// RECORD with header NAME set to VALUE (replaced when it has it).
kafka::ConsumedRecord with_header(kafka::ConsumedRecord record, const std::string& name, const std::string& value);

}  // namespace binberg::sink::samples
