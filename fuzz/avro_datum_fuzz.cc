// libFuzzer target over the Avro datum decoder, skipping and schema resolution. Input: byte 0 picks
// one of the fuzz schemas (tests/avro/fuzz_decoder.cc), the rest is the datum.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace binberg::avro::fuzzing;
  if (size == 0) return 0;
  fuzz_datum(data[0] % fuzz_schemas().size(), std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
