# Warnings are errors for binberg's own code; third-party headers are included as SYSTEM.
add_library(binberg_warnings INTERFACE)
target_compile_options(binberg_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual
  -Wimplicit-fallthrough -Wmissing-declarations -Werror)
