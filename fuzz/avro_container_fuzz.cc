// libFuzzer target over the Avro object container reader (header, metadata, codecs, blocks, sync
// markers, and the datums inside). Input: the whole file.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  binberg::avro::fuzzing::fuzz_container(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
