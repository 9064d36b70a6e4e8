// Writes the seed corpora of the fuzz targets: avro_fuzz_seeds DATUM_DIR CONTAINER_DIR. The seeds are
// the harness's own valid inputs (tests/avro/fuzz_decoder.cc), so they always match its schemas.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "fuzz_decoder.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: avro_fuzz_seeds DATUM_DIR CONTAINER_DIR\n";
    return 2;
  }
  const std::filesystem::path datum_dir = argv[1];
  const std::filesystem::path container_dir = argv[2];
  std::filesystem::create_directories(datum_dir);
  std::filesystem::create_directories(container_dir);
  int datums = 0;
  int containers = 0;
  for (const std::string& input : binberg::avro::fuzzing::seed_inputs()) {
    const bool is_container = (static_cast<unsigned char>(input[0]) & binberg::avro::fuzzing::kContainerInput) != 0;
    // The container target takes the bare file; the datum target keeps the schema selector byte.
    const std::string bytes = is_container ? input.substr(1) : input;
    char name[32];
    std::snprintf(name, sizeof name, "seed-%03d", is_container ? containers++ : datums++);
    std::ofstream out((is_container ? container_dir : datum_dir) / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::cerr << "avro_fuzz_seeds: cannot write " << name << "\n";
      return 1;
    }
  }
  std::cout << "avro_fuzz_seeds: " << datums << " datum seeds in " << datum_dir.string() << ", " << containers
            << " container seeds in " << container_dir.string() << "\n";
  return 0;
}
