# binberg_library(NAME SOURCES ... DEPS ...): the static library binberg_NAME of one subsystem,
# exporting src/ as its include root. Used by src/ and by the fuzz-only build (fuzz/).
function(binberg_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(binberg_${name} STATIC ${ARG_SOURCES})
  target_include_directories(binberg_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(binberg_${name} PUBLIC ${ARG_DEPS} PRIVATE binberg_warnings)
endfunction()
