# Writes OUT, a C++ file defining binberg::git_sha(), from the checkout at SOURCE_DIR: the commit,
# with "-dirty" when tracked files differ from it ("unknown" outside a checkout). Run at every build
# and rewritten only when that text changes, so a new commit recompiles one file, and a record's
# provenance never names a commit the binary was not built from.
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0 OR sha STREQUAL "")
  set(sha "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND sha "-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/write_git_sha.cmake.\n#include \"core/version.h\"\n\nnamespace binberg {\n\nconst char* git_sha() { return \"${sha}\"; }\n\n}  // namespace binberg\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
