#pragma once

// Writing the files a catalog commit refers to: the one place binberg's durability rule is kept.
//
// The rule: every file a commit references (data files, position-delete files, manifests, manifest
// lists, metadata files) is on stable storage before the catalog transaction that publishes it,
// and so is every directory entry on the way to it:
//   1. the file's contents are fsynced;
//   2. its directory is fsynced after the file got its name there;
//   3. each directory created for it is named durably: its parent is fsynced after the directory
//      appeared, up to a directory that existed already (and was made durable when it was made).
// The writers below return only once all three hold, and a commit names only files they wrote, so
// after a power loss or kernel crash the catalog never points at a file that is missing, empty or
// short, which would lose rows for good (or bring deleted rows back) while the source position the
// snapshot records is already past them. A crash before the catalog transaction leaves orphans.
// The catalog transaction itself must be durable too: see the settings open_sqlite and
// open_postgres insist on (sql_connection.h). tests/iceberg/durability_test.cc proves the order on
// real commits (strace: every referenced file and directory entry synced before the catalog writes).
//
// Paths are local file system paths; an object store's FileIO keeps the same promise per object.

#include <filesystem>
#include <string_view>

namespace binberg::iceberg::durable {

// Creates DIRECTORY and every missing parent (rule 3). Throws Error naming the directory.
void create_directories(const std::filesystem::path& directory);

// Writes CONTENTS as the new file PATH under rules 1 to 3: a temporary file in the same directory
// (created if missing), fsynced, then hard-linked to PATH (which refuses an existing PATH: these
// files are written once) and the directory fsynced. Readers never see a partial file under PATH.
// FAILPOINT (unless empty) is hit just before the file gets its name. The file has mode 0644
// whatever the umask. Errors start with WHAT; no temporary file is left behind.
void write_new_file(const std::filesystem::path& path, std::string_view contents, std::string_view what,
                    std::string_view failpoint = {});

// Rules 1 and 2 for a file a library wrote and closed at PATH (Parquet files, through Arrow), in a
// directory made by create_directories: fsyncs its contents, then its directory.
void sync_written_file(const std::filesystem::path& path, std::string_view what);

}  // namespace binberg::iceberg::durable
