# Arrow and Parquet C++ from the pinned pyarrow wheel (deps/requirements.txt) in the project venv.
# The wheel has no CMake package config and only versioned .so names, so the target is wired by hand.
# ABI: the manylinux_2_28 wheel uses _GLIBCXX_USE_CXX11_ABI=1, Debian g++'s default; do not override it.
set(BINBERG_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python of the venv holding pyarrow")
set(BINBERG_ARROW_SOVERSION "2600" CACHE STRING "SO version of the pinned pyarrow's C++ libraries")

if(NOT EXISTS "${BINBERG_PYTHON}")
  message(FATAL_ERROR "pyarrow: no venv python at ${BINBERG_PYTHON}. Run scripts/setup first "
                      "(or set -DBINBERG_PYTHON=<python with pyarrow==26.0.1>).")
endif()
execute_process(
  COMMAND "${BINBERG_PYTHON}" -c "import os, pyarrow; print(pyarrow.get_include()); print(os.path.dirname(pyarrow.__file__)); print(pyarrow.__version__)"
  OUTPUT_VARIABLE _pyarrow_out RESULT_VARIABLE _pyarrow_rc ERROR_VARIABLE _pyarrow_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pyarrow_rc EQUAL 0)
  message(FATAL_ERROR "pyarrow: cannot import pyarrow with ${BINBERG_PYTHON}: ${_pyarrow_err}Run scripts/setup.")
endif()
string(REPLACE "\n" ";" _pyarrow_out "${_pyarrow_out}")
list(GET _pyarrow_out 0 PYARROW_INCLUDE_DIR)
list(GET _pyarrow_out 1 PYARROW_LIB_DIR)
list(GET _pyarrow_out 2 PYARROW_VERSION)

foreach(_lib arrow parquet arrow_compute)
  set(_path "${PYARROW_LIB_DIR}/lib${_lib}.so.${BINBERG_ARROW_SOVERSION}")
  if(NOT EXISTS "${_path}")
    message(FATAL_ERROR "pyarrow ${PYARROW_VERSION}: expected ${_path} is missing. "
                        "binberg is pinned to pyarrow 26.0.x (SO version ${BINBERG_ARROW_SOVERSION}).")
  endif()
endforeach()
foreach(_hdr arrow/api.h parquet/arrow/writer.h)
  if(NOT EXISTS "${PYARROW_INCLUDE_DIR}/${_hdr}")
    message(FATAL_ERROR "pyarrow ${PYARROW_VERSION}: header ${PYARROW_INCLUDE_DIR}/${_hdr} is missing.")
  endif()
endforeach()
message(STATUS "Arrow/Parquet C++ from pyarrow ${PYARROW_VERSION}: ${PYARROW_LIB_DIR}")

add_library(binberg_arrow INTERFACE)
target_include_directories(binberg_arrow SYSTEM INTERFACE "${PYARROW_INCLUDE_DIR}")
target_link_libraries(binberg_arrow INTERFACE
  "${PYARROW_LIB_DIR}/libparquet.so.${BINBERG_ARROW_SOVERSION}"
  "${PYARROW_LIB_DIR}/libarrow.so.${BINBERG_ARROW_SOVERSION}")
# libparquet needs libarrow_compute at run time: keep the whole pyarrow dir on the RPATH.
set(CMAKE_BUILD_RPATH "${CMAKE_BUILD_RPATH};${PYARROW_LIB_DIR}")
set(CMAKE_INSTALL_RPATH "${CMAKE_INSTALL_RPATH};${PYARROW_LIB_DIR}")
