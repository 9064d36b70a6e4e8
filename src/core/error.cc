#include "core/error.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace binberg {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}: {}", path, std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace binberg
