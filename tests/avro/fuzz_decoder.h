#pragma once

// Shared by the libFuzzer entry points (fuzz_decoder.cc here, and the separate datum and container
// targets under fuzz/) and the deterministic fuzz test.
//
// Combined input layout (LLVMFuzzerTestOneInput below): if the first byte has its high bit set, the
// rest is an object container file; otherwise the first byte picks one of fuzz_schemas() and the
// rest is a datum of that schema.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"

namespace binberg::avro::fuzzing {

inline constexpr std::uint8_t kContainerInput = 0x80;

// Schemas exercising every decoder path: all types, nested unions, blocks and recursion.
const std::vector<Schema>& fuzz_schemas();

// Decodes, skips and resolves `datum` with fuzz_schemas()[index] (index < fuzz_schemas().size()).
void fuzz_datum(std::size_t index, std::string_view datum);
// Reads `file` as an object container file to its end.
void fuzz_container(std::string_view file);

// Valid inputs in the combined layout: datums of every fuzz schema and container files of every codec.
std::vector<std::string> seed_inputs();

}  // namespace binberg::avro::fuzzing

// The combined entry point; left out where the separate targets under fuzz/ define their own.
#ifndef BINBERG_FUZZ_SEPARATE_TARGETS
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
#endif
