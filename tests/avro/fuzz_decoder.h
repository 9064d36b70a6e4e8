#pragma once

// Shared by the libFuzzer entry point (fuzz_decoder.cc) and the deterministic fuzz test.
//
// Input layout: if the first byte has its high bit set, the rest is an object container file;
// otherwise the first byte picks one of fuzz_schemas() and the rest is a datum of that schema.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "avro/schema.h"

namespace binberg::avro::fuzzing {

inline constexpr std::uint8_t kContainerInput = 0x80;

// Schemas exercising every decoder path: all types, nested unions, blocks and recursion.
const std::vector<Schema>& fuzz_schemas();

}  // namespace binberg::avro::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
