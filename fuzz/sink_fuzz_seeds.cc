// Writes the seed corpus of sink_record_fuzz: sink_fuzz_seeds DIR. The seeds are real records of
// binberg source's form, made by binberg's own encoder (tests/sink/sample_records.h), so they never
// drift from what the sink reads.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "record_fuzzing.h"
#include "sample_records.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sink_fuzz_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  int written = 0;
  for (const auto& record : binberg::sink::samples::records()) {
    char name[32];
    std::snprintf(name, sizeof name, "seed-%03d", written++);
    const std::string bytes = binberg::sink::fuzzing::encode(record);
    std::ofstream out(dir / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::cerr << "sink_fuzz_seeds: cannot write " << (dir / name).string() << "\n";
      return 1;
    }
  }
  std::cout << "sink_fuzz_seeds: " << written << " seeds in " << dir.string() << "\n";
  return 0;
}
