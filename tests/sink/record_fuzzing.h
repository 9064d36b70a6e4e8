#pragma once

// The sink's record handling under hostile input, shared by the libFuzzer target
// (fuzz/sink_record_fuzz.cc, seeds written by fuzz/sink_fuzz_seeds.cc) and the unit test that
// runs it over mutated samples (record_fuzzing_test.cc). No Kafka, no registry: the schemas are
// sample_records.h's.
//
// Input layout: byte 0 holds the flags (bit 0: the record has a key, bit 1: a value) and the
// partition (bits 2-3); then, each as a 2-byte little-endian length and that many bytes (cut short
// at the end of the input): the key, the value, then header names and values to the end.

#include <string>
#include <string_view>

#include "kafka/consumer.h"

namespace binberg::sink::fuzzing {

// RECORD in the layout above (the fuzzer's seeds).
std::string encode(const kafka::ConsumedRecord& record);
// The record INPUT describes, at offset 7 of its partition of samples::kTopic.
kafka::ConsumedRecord decode(std::string_view input);

// Hands INPUT's record to the sink as its reader and its session do (decode_record, RecordFacts,
// the route, take_change, key_problem, judge_change, counting it in its transaction). Anything
// escaping as an exception, or a verdict that breaks what the session relies on, fails: an
// exception that is not a registry outage would restart the session on the same record for ever.
void handle(std::string_view input);

}  // namespace binberg::sink::fuzzing
