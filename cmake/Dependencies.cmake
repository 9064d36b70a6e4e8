# Every third-party library binberg links, each as an imported target. Debian 12 packages come from
# deps/apt-packages.txt; Arrow/Parquet C++ from the pinned pyarrow wheel in .venv (see PyArrow.cmake).
find_package(PkgConfig REQUIRED)
pkg_check_modules(MARIADB REQUIRED IMPORTED_TARGET libmariadb)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka++ rdkafka)
# Debian's cpp-httplib is a compiled library: its pkg-config defines must match or class layouts differ.
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)

find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Threads REQUIRED)

include("${CMAKE_CURRENT_LIST_DIR}/PyArrow.cmake")
