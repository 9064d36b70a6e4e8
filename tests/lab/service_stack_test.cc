#include "lab/service_stack.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace binberg::lab {
namespace {

// `binberg services` runs the script it was built with, not a file of the source tree.
TEST(ServiceStackTest, TheBinaryCarriesTheServicesScriptItWasBuiltWith) {
  EXPECT_EQ(std::string(services_script()), read_file(std::string(BINBERG_SOURCE_DIR) + "/scripts/services"));
}

}  // namespace
}  // namespace binberg::lab
