#pragma once

// What a logged DDL statement does to tables, as far as replication needs to know: which tables
// it touches and, for ALTER TABLE, each column-level change and the value rows that existed before
// an ADD COLUMN get. Only what is certain is reported as such: a clause this parser does not
// understand becomes a kUnknown change carrying its text, so callers refuse it instead of guessing.
//
// Grammar covered (MariaDB 10.x/11.x, MySQL 8): comments (/* */, -- , #), backtick-quoted and bare
// identifiers, 'string' and "string" literals (with \ escapes and doubled quotes), numbers.
//   ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] [db.]name spec [, spec]...
//     ADD [COLUMN] [IF NOT EXISTS] name definition [FIRST | AFTER col]
//     ADD [COLUMN] [IF NOT EXISTS] (name definition, ...)
//     DROP [COLUMN] [IF EXISTS] name [RESTRICT | CASCADE]
//     RENAME COLUMN old TO new
//     CHANGE [COLUMN] [IF EXISTS] old new definition [FIRST | AFTER col]
//     MODIFY [COLUMN] [IF EXISTS] name definition [FIRST | AFTER col]
//     ALTER [COLUMN] name SET DEFAULT ... | DROP DEFAULT     (no effect on stored rows)
//     ADD/DROP {INDEX | KEY | UNIQUE | FULLTEXT | SPATIAL | FOREIGN KEY | CONSTRAINT | CHECK},
//     RENAME {INDEX | KEY}, table options (ENGINE=, COMMENT=, AUTO_INCREMENT=, ...),
//     ALGORITHM=, LOCK=, FORCE                                  (kIndexOrOption: no row effect)
//     ADD PRIMARY KEY, DROP PRIMARY KEY                         (kPrimaryKey)
//     RENAME [TO | AS] new_name                                 (kRenameTable)
//     CONVERT TO CHARACTER SET, ORDER BY, anything else         (kUnknown)
//   DROP TABLE, RENAME TABLE, TRUNCATE [TABLE], CREATE TABLE: the tables named (kind says which).
//   CREATE/DROP INDEX, CREATE/DROP DATABASE, views, procedures...: no tables (row data unaffected).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace binberg::mysql {

// The value an ADD COLUMN gives the rows that already exist.
struct ExistingRowsValue {
  enum class Kind {
    kNull,      // nullable without DEFAULT, or DEFAULT NULL
    kLiteral,   // DEFAULT with a constant: `text` is its value (unquoted, unescaped), e.g. "5", "-1.5", "abc"
    kImplicit,  // NOT NULL without DEFAULT: the type's implicit default (0, '', first ENUM value...)
    kUnknown,   // an expression, a function (CURRENT_TIMESTAMP, UUID()...), AUTO_INCREMENT, a generated
                // (AS/GENERATED ALWAYS) or invisible column: `text` says which
  };
  Kind kind = Kind::kNull;
  std::string text;
  bool operator==(const ExistingRowsValue&) const = default;
};

struct ColumnChange {
  enum class Kind {
    kAdd,            // column: the new name; existing_rows set
    kDrop,           // column
    kRename,         // column: old name, new_name (RENAME COLUMN)
    kModify,         // column (old name), new_name (== column unless CHANGE renamed it): a new definition
    kSetDefault,     // column: ALTER COLUMN SET/DROP DEFAULT
    kIndexOrOption,  // no effect on column values
    kPrimaryKey,     // the primary key is added or dropped
    kRenameTable,    // new_name: the table's new name ("db.name" when qualified)
    kUnknown,        // text holds the clause
  };
  Kind kind = Kind::kUnknown;
  std::string column;
  std::string new_name;
  std::string type;                 // kAdd/kModify: the type as written, e.g. "DECIMAL(12,2) UNSIGNED"
  bool not_null = false;            // kAdd/kModify: the definition says NOT NULL (or PRIMARY KEY)
  ExistingRowsValue existing_rows;  // kAdd only
  std::string text;                 // the clause as written (for messages)
  bool operator==(const ColumnChange&) const = default;
};

struct DdlTable {
  std::string database;  // the qualifier, or the statement's default database
  std::string table;
  bool operator==(const DdlTable&) const = default;
};

struct DdlStatement {
  enum class Kind { kAlterTable, kCreateTable, kDropTable, kRenameTable, kTruncateTable, kOther };
  Kind kind = Kind::kOther;
  // Every table the statement changes: ALTER's table; DROP's list; RENAME's sources (the old
  // names) and targets; TRUNCATE's table; CREATE's table. Empty for kOther.
  std::vector<DdlTable> tables;
  std::vector<ColumnChange> changes;  // kAlterTable only, in statement order
};

// Parses STATEMENT, logged with DEFAULT_DATABASE as its current database. Identifiers are returned
// as the server stores them (unquoted, case kept). Never throws for unrecognised syntax (see the
// file comment); throws Error only for malformed text (an unterminated quote or comment),
// naming the statement.
DdlStatement parse_ddl(std::string_view statement, std::string_view default_database);

}  // namespace binberg::mysql
