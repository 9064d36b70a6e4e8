#include "mysql/ddl_statement.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace binberg::mysql {
namespace {

using ChangeKind = ColumnChange::Kind;
using RowsKind = ExistingRowsValue::Kind;

// Changes are compared through a one-line description so a failure shows what was parsed.
std::string describe(const ExistingRowsValue& rows) {
  switch (rows.kind) {
    case RowsKind::kNull:
      return "null";
    case RowsKind::kLiteral:
      return "literal(" + rows.text + ")";
    case RowsKind::kImplicit:
      return "implicit";
    case RowsKind::kUnknown:
      return "unknown(" + rows.text + ")";
  }
  return "?";
}

std::string describe(const ColumnChange& change) {
  const std::string not_null = change.not_null ? " not null" : "";
  switch (change.kind) {
    case ChangeKind::kAdd:
      return "add " + change.column + not_null + " rows=" + describe(change.existing_rows);
    case ChangeKind::kDrop:
      return "drop " + change.column;
    case ChangeKind::kRename:
      return "rename " + change.column + " to " + change.new_name;
    case ChangeKind::kModify:
      return "modify " + change.column + " as " + change.new_name + not_null;
    case ChangeKind::kSetDefault:
      return "set default " + change.column;
    case ChangeKind::kIndexOrOption:
      return "index or option";
    case ChangeKind::kPrimaryKey:
      return "primary key";
    case ChangeKind::kRenameTable:
      return "rename table to " + change.new_name;
    case ChangeKind::kUnknown:
      return "unknown(" + change.text + ")";
  }
  return "?";
}

std::vector<std::string> describe_changes(std::string_view sql) {
  const DdlStatement statement = parse_ddl(sql, "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kAlterTable) << sql;
  std::vector<std::string> descriptions;
  for (const ColumnChange& change : statement.changes) descriptions.push_back(describe(change));
  return descriptions;
}

// The description of the only change in SQL (an ALTER TABLE).
std::string describe_change(std::string_view sql) {
  const std::vector<std::string> changes = describe_changes(sql);
  if (changes.size() != 1) {
    ADD_FAILURE() << sql << ": expected one change, got " << changes.size();
    return {};
  }
  return changes[0];
}

std::string describe_tables(const DdlStatement& statement) {
  std::string text;
  for (const DdlTable& table : statement.tables) {
    if (!text.empty()) text += ", ";
    text += table.database + "." + table.table;
  }
  return text;
}

TEST(DdlStatementTest, AddColumnExistingRowsFromDefault) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD COLUMN c INT"), "add c rows=null");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NULL"), "add c rows=null");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT NULL"), "add c rows=null");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL"), "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c TIMESTAMP NOT NULL"), "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL DEFAULT 5"), "add c not null rows=literal(5)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT 5 NOT NULL"), "add c not null rows=literal(5)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT -1"), "add c rows=literal(-1)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c DECIMAL(5,1) DEFAULT -1.5"), "add c rows=literal(-1.5)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c DOUBLE DEFAULT 1e-3"), "add c rows=literal(1e-3)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c VARCHAR(10) DEFAULT 'abc'"), "add c rows=literal(abc)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c VARCHAR(10) DEFAULT \"abc\""), "add c rows=literal(abc)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c VARCHAR(10) NOT NULL DEFAULT ''"), "add c not null rows=literal()");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c BOOL DEFAULT TRUE"), "add c rows=literal(1)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c BOOL DEFAULT false"), "add c rows=literal(0)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c DATE DEFAULT DATE '2024-01-31'"), "add c rows=literal(2024-01-31)");
}

TEST(DdlStatementTest, AddColumnWithNonConstantValueIsUnknown) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP"),
            "add c not null rows=unknown(CURRENT_TIMESTAMP)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c DATETIME(6) DEFAULT now(6) ON UPDATE now(6)"),
            "add c rows=unknown(now(6))");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT (a + 1)"), "add c rows=unknown((a + 1))");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c CHAR(36) DEFAULT uuid()"), "add c rows=unknown(uuid())");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT other_column"), "add c rows=unknown(other_column)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c BINARY(1) DEFAULT 0x41"), "add c rows=unknown(0x41)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL AUTO_INCREMENT PRIMARY KEY"),
            "add c not null rows=unknown(AUTO_INCREMENT)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c SERIAL"), "add c not null rows=unknown(AUTO_INCREMENT)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT AS (a * 2) VIRTUAL"), "add c rows=unknown(generated column)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT GENERATED ALWAYS AS (a * 2) STORED NOT NULL"),
            "add c not null rows=unknown(generated column)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT DEFAULT 1 INVISIBLE"), "add c rows=unknown(INVISIBLE)");
}

TEST(DdlStatementTest, PrimaryKeyInColumnDefinitionMeansNotNull) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT PRIMARY KEY"), "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT KEY"), "add c not null rows=implicit");  // KEY = PRIMARY KEY
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT UNIQUE KEY"), "add c rows=null");
}

TEST(DdlStatementTest, ColumnAttributesDoNotMasqueradeAsNullOrDefault) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET DEFAULT"),
            "add c rows=null");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL COLUMN_FORMAT DEFAULT COMMENT 'NULL DEFAULT 7'"),
            "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c VARCHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"),
            "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL CONSTRAINT invisible CHECK (c > 0)"),
            "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT UNSIGNED ZEROFILL NOT NULL DEFAULT '7' AFTER invisible"),
            "add c not null rows=literal(7)");
}

TEST(DdlStatementTest, AddColumnPositionIsIgnored) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT NOT NULL DEFAULT 3 FIRST"), "add c not null rows=literal(3)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD COLUMN c INT DEFAULT 3 AFTER b"), "add c rows=literal(3)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD COLUMN IF NOT EXISTS c INT AFTER `first`"), "add c rows=null");
}

TEST(DdlStatementTest, AddColumnListGivesOneChangePerColumn) {
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD COLUMN (a INT, b DECIMAL(10,2) NOT NULL DEFAULT 1.50)"),
            (std::vector<std::string>{"add a rows=null", "add b not null rows=literal(1.50)"}));
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD (a INT NOT NULL, INDEX (a))"),
            (std::vector<std::string>{"add a not null rows=implicit", "index or option"}));
}

TEST(DdlStatementTest, AddAndModifyKeepTheDeclaredType) {
  const DdlStatement statement = parse_ddl(
      "ALTER TABLE t ADD a decimal(10, 2) unsigned zerofill NOT NULL, MODIFY b DOUBLE PRECISION DEFAULT 1, "
      "CHANGE c d VARCHAR(20) CHARACTER SET latin1, ADD e SERIAL",
      "shop");
  ASSERT_EQ(statement.changes.size(), 4U);
  EXPECT_EQ(statement.changes[0].type, "decimal(10, 2) unsigned zerofill");
  EXPECT_EQ(statement.changes[1].type, "DOUBLE PRECISION");
  EXPECT_EQ(statement.changes[2].type, "VARCHAR(20)");
  EXPECT_EQ(statement.changes[3].type, "SERIAL");
}

TEST(DdlStatementTest, CommasInsideParenthesesOrStringsDoNotSplitSpecifications) {
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD a DECIMAL(10,2) NOT NULL, ADD b ENUM('a,b','c') DEFAULT 'a,b'"),
            (std::vector<std::string>{"add a not null rows=implicit", "add b rows=literal(a,b)"}));
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD b SET('x','y') NOT NULL, DROP c"),
            (std::vector<std::string>{"add b not null rows=implicit", "drop c"}));
}

TEST(DdlStatementTest, StringEscapes) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c TEXT DEFAULT 'it''s'"), "add c rows=literal(it's)");
  EXPECT_EQ(describe_change(R"(ALTER TABLE t ADD c TEXT DEFAULT 'a\'b')"), "add c rows=literal(a'b)");
  EXPECT_EQ(describe_change(R"(ALTER TABLE t ADD c TEXT DEFAULT "say ""hi"" \"x\"")"),
            "add c rows=literal(say \"hi\" \"x\")");
  EXPECT_EQ(describe_change(R"(ALTER TABLE t ADD c TEXT DEFAULT 'a\nb\tc\\d\%')"), "add c rows=literal(a\nb\tc\\d\\%)");
  EXPECT_EQ(describe_change(R"(ALTER TABLE t ADD c TEXT DEFAULT 'a' 'b')"), "add c rows=literal(ab)");

  const ColumnChange nul = parse_ddl(R"(ALTER TABLE t ADD c TEXT DEFAULT 'x\0y')", "shop").changes.at(0);
  EXPECT_EQ(nul.existing_rows.text, std::string("x\0y", 3));
}

TEST(DdlStatementTest, BacktickNamesKeepCaseSpacesAndEscapedBackticks) {
  const DdlStatement statement = parse_ddl("ALTER TABLE `My Db`.`Odd``Table` ADD `Col Name` INT", "shop");
  EXPECT_EQ(describe_tables(statement), "My Db.Odd`Table");
  ASSERT_EQ(statement.changes.size(), 1u);
  EXPECT_EQ(describe(statement.changes[0]), "add Col Name rows=null");
  // A quoted keyword is a name, never the keyword.
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD `primary` INT, DROP `index`"),
            (std::vector<std::string>{"add primary rows=null", "drop index"}));
}

TEST(DdlStatementTest, TableQualifiedOrInDefaultDatabase) {
  EXPECT_EQ(describe_tables(parse_ddl("ALTER TABLE Orders ADD c INT", "shop")), "shop.Orders");
  EXPECT_EQ(describe_tables(parse_ddl("alter table other.Orders add c int", "shop")), "other.Orders");
  EXPECT_EQ(describe_tables(parse_ddl("ALTER ONLINE IGNORE TABLE IF EXISTS a.b WAIT 5 FORCE", "shop")), "a.b");
  EXPECT_EQ(describe_tables(parse_ddl("ALTER TABLE b NOWAIT ADD c INT", "shop")), "shop.b");
}

TEST(DdlStatementTest, DropRenameChangeModify) {
  EXPECT_EQ(describe_change("ALTER TABLE t DROP c"), "drop c");
  EXPECT_EQ(describe_change("ALTER TABLE t DROP COLUMN IF EXISTS c CASCADE"), "drop c");
  EXPECT_EQ(describe_change("ALTER TABLE t RENAME COLUMN a TO b"), "rename a to b");
  EXPECT_EQ(describe_change("ALTER TABLE t CHANGE a b BIGINT NOT NULL"), "modify a as b not null");
  EXPECT_EQ(describe_change("ALTER TABLE t CHANGE COLUMN IF EXISTS a a VARCHAR(20) AFTER x"), "modify a as a");
  EXPECT_EQ(describe_change("ALTER TABLE t MODIFY a INT PRIMARY KEY"), "modify a as a not null");
  EXPECT_EQ(describe_change("ALTER TABLE t MODIFY COLUMN a TEXT NULL FIRST"), "modify a as a");
  EXPECT_EQ(describe_change("ALTER TABLE t ALTER COLUMN a SET DEFAULT 5"), "set default a");
  EXPECT_EQ(describe_change("ALTER TABLE t ALTER a DROP DEFAULT"), "set default a");
  EXPECT_EQ(describe_change("ALTER TABLE t ALTER COLUMN a SET INVISIBLE"), "unknown(ALTER COLUMN a SET INVISIBLE)");

  const ColumnChange change = parse_ddl("ALTER TABLE t MODIFY a INT NOT NULL", "shop").changes.at(0);
  EXPECT_EQ(change.column, "a");
  EXPECT_EQ(change.new_name, "a");
  EXPECT_EQ(change.text, "MODIFY a INT NOT NULL");
}

TEST(DdlStatementTest, IndexAndOptionClausesDoNotTouchRows) {
  for (const char* spec : {
           "ADD INDEX i (a, b)",
           "ADD UNIQUE KEY u (a)",
           "ADD FULLTEXT (body)",
           "ADD SPATIAL INDEX (g)",
           "ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES p (id) ON DELETE SET NULL",
           "ADD CHECK (a > 0)",
           "ADD INDEX IF NOT EXISTS i (a)",
           "DROP INDEX i",
           "DROP KEY i",
           "DROP FOREIGN KEY fk",
           "DROP CONSTRAINT c",
           "DROP CHECK c",
           "RENAME INDEX a TO b",
           "RENAME KEY a TO b",
           "ALTER INDEX i INVISIBLE",
           "ENGINE=InnoDB",
           "ENGINE InnoDB",
           "DEFAULT CHARSET=utf8mb4",
           "CHARACTER SET = latin1",
           "DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
           "COLLATE=utf8mb4_bin",
           "COMMENT='a, b'",
           "COMMENT 'x' AUTO_INCREMENT=100 ROW_FORMAT=DYNAMIC",
           "KEY_BLOCK_SIZE=8",
           "ALGORITHM=INPLACE",
           "LOCK = NONE",
           "FORCE",
           "STATS_PERSISTENT=0",
           "PAGE_CHECKSUM=1",
           "TRANSACTIONAL=0",
           "ENABLE KEYS",
           "DISABLE KEYS",
           "ADD PARTITION (PARTITION p3 VALUES LESS THAN (30))",
           "PARTITION BY HASH(id) PARTITIONS 4",
           "REMOVE PARTITIONING",
           "COALESCE PARTITION 2",
           "REORGANIZE PARTITION p0 INTO (PARTITION a VALUES LESS THAN (5), PARTITION b VALUES LESS THAN (10))",
           "ADD PERIOD FOR p (s, e)",
       }) {
    EXPECT_EQ(describe_change(std::string("ALTER TABLE t ") + spec), "index or option") << spec;
  }
}

TEST(DdlStatementTest, PrimaryKeyChanges) {
  EXPECT_EQ(describe_change("ALTER TABLE t ADD PRIMARY KEY (id)"), "primary key");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (id)"), "primary key");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD CONSTRAINT PRIMARY KEY (id)"), "primary key");
  EXPECT_EQ(describe_change("ALTER TABLE t DROP PRIMARY KEY"), "primary key");
  EXPECT_EQ(describe_change("ALTER TABLE t DROP INDEX `PRIMARY`"), "primary key");
  EXPECT_EQ(describe_changes("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)"),
            (std::vector<std::string>{"primary key", "primary key"}));
}

TEST(DdlStatementTest, AlterIgnoreWithNewUniqueKeyIsUnknown) {
  // ALTER IGNORE deletes the rows that duplicate a new unique key, without logging them.
  EXPECT_EQ(describe_change("ALTER IGNORE TABLE t ADD UNIQUE (a)"), "unknown(ADD UNIQUE (a))");
  EXPECT_EQ(describe_change("ALTER IGNORE TABLE t ADD PRIMARY KEY (a)"), "unknown(ADD PRIMARY KEY (a))");
  EXPECT_EQ(describe_change("ALTER IGNORE TABLE t ADD c INT NOT NULL UNIQUE"), "unknown(ADD c INT NOT NULL UNIQUE)");
  EXPECT_EQ(describe_change("ALTER IGNORE TABLE t ADD INDEX (a)"), "index or option");
}

TEST(DdlStatementTest, ClausesThatLoseOrRewriteRowsAreUnknown) {
  EXPECT_EQ(describe_change("ALTER TABLE t DROP PARTITION p0"), "unknown(DROP PARTITION p0)");
  EXPECT_EQ(describe_change("ALTER TABLE t TRUNCATE PARTITION p0"), "unknown(TRUNCATE PARTITION p0)");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD SYSTEM VERSIONING"), "unknown(ADD SYSTEM VERSIONING)");
}

TEST(DdlStatementTest, RenameTableInsideAlter) {
  EXPECT_EQ(describe_change("ALTER TABLE t RENAME TO u"), "rename table to u");
  EXPECT_EQ(describe_change("ALTER TABLE t RENAME AS `other`.`U v`"), "rename table to other.U v");
  EXPECT_EQ(describe_change("ALTER TABLE t RENAME u"), "rename table to u");
}

TEST(DdlStatementTest, UnrecognisedClausesKeepTheirText) {
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD c INT,  ORDER BY a DESC , CONVERT TO CHARACTER SET utf8mb4"),
            (std::vector<std::string>{"add c rows=null", "unknown(ORDER BY a DESC)",
                                      "unknown(CONVERT TO CHARACTER SET utf8mb4)"}));
  EXPECT_EQ(describe_change("ALTER TABLE t DISCARD TABLESPACE"), "unknown(DISCARD TABLESPACE)");
  EXPECT_EQ(describe_change("ALTER TABLE t IMPORT TABLESPACE"), "unknown(IMPORT TABLESPACE)");
  EXPECT_EQ(describe_change("ALTER TABLE t ENGINE=InnoDB frobnicate"), "unknown(ENGINE=InnoDB frobnicate)");
  EXPECT_EQ(describe_change("ALTER TABLE t DROP c d"), "unknown(DROP c d)");
  EXPECT_TRUE(describe_changes("ALTER TABLE t").empty());
}

TEST(DdlStatementTest, CommentsAreSkippedAndExecutableCommentsAreCode) {
  EXPECT_EQ(describe_change("/* leading */ ALTER TABLE t /* inner, with comma */ ADD c INT NOT NULL;"),
            "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT -- , DROP d\n NOT NULL"), "add c not null rows=implicit");
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT # NOT NULL\n"), "add c rows=null");
  EXPECT_EQ(describe_change("ALTER TABLE t ORDER BY a--b"), "unknown(ORDER BY a--b)");  // not a comment
  EXPECT_EQ(describe_change("/*!40000 ALTER TABLE `t` DISABLE KEYS */;"), "index or option");
  EXPECT_EQ(describe_changes("ALTER TABLE t ADD c INT /*!50100 NOT NULL */, ADD d INT /*M!100301 DEFAULT 4*/"),
            (std::vector<std::string>{"add c not null rows=implicit", "add d rows=literal(4)"}));
  EXPECT_EQ(describe_change("ALTER TABLE t ADD c INT /*! DEFAULT 2 */"), "add c rows=literal(2)");
}

TEST(DdlStatementTest, DropTableListsEveryTable) {
  DdlStatement statement = parse_ddl("DROP TABLE IF EXISTS `a`, other.`b` /* generated by server */", "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kDropTable);
  EXPECT_EQ(describe_tables(statement), "shop.a, other.b");
  EXPECT_TRUE(statement.changes.empty());

  statement = parse_ddl("drop temporary table t1, t2 restrict", "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kDropTable);
  EXPECT_EQ(describe_tables(statement), "shop.t1, shop.t2");
}

TEST(DdlStatementTest, RenameTableListsSourcesAndTargets) {
  const DdlStatement statement = parse_ddl("RENAME TABLE a TO b, x.c TO y.d", "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kRenameTable);
  EXPECT_EQ(describe_tables(statement), "shop.a, shop.b, x.c, y.d");
}

TEST(DdlStatementTest, TruncateAndCreateTable) {
  DdlStatement statement = parse_ddl("TRUNCATE TABLE x.t", "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kTruncateTable);
  EXPECT_EQ(describe_tables(statement), "x.t");

  statement = parse_ddl("truncate t", "shop");
  EXPECT_EQ(statement.kind, DdlStatement::Kind::kTruncateTable);
  EXPECT_EQ(describe_tables(statement), "shop.t");

  for (const char* sql : {"CREATE TABLE t (id INT PRIMARY KEY, v DECIMAL(10,2))",
                          "CREATE OR REPLACE TEMPORARY TABLE IF NOT EXISTS t (id INT)", "CREATE TABLE t LIKE u",
                          "CREATE TABLE t SELECT * FROM u"}) {
    statement = parse_ddl(sql, "shop");
    EXPECT_EQ(statement.kind, DdlStatement::Kind::kCreateTable) << sql;
    EXPECT_EQ(describe_tables(statement), "shop.t") << sql;
  }
}

TEST(DdlStatementTest, OtherStatementsNameNoTables) {
  for (const char* sql : {"CREATE INDEX i ON t (a)", "CREATE UNIQUE INDEX i ON t (a)", "DROP INDEX i ON t",
                          "CREATE DATABASE d", "DROP DATABASE d", "CREATE VIEW v AS SELECT 1",
                          "CREATE OR REPLACE VIEW v AS SELECT 1", "ALTER DATABASE d CHARACTER SET utf8mb4",
                          "GRANT SELECT ON *.* TO u", "RENAME USER a TO b", "", "  /* only a comment */ "}) {
    const DdlStatement statement = parse_ddl(sql, "shop");
    EXPECT_EQ(statement.kind, DdlStatement::Kind::kOther) << sql;
    EXPECT_TRUE(statement.tables.empty()) << sql;
  }
}

TEST(DdlStatementTest, UnterminatedQuoteOrCommentThrowsNamingTheStatement) {
  for (const char* sql : {"ALTER TABLE t ADD c TEXT DEFAULT 'abc", "ALTER TABLE `t ADD c INT",
                          "ALTER TABLE t ADD c TEXT DEFAULT \"abc\\\"", "ALTER TABLE t /* ADD c INT",
                          "ALTER TABLE t /*!50100 ADD c INT"}) {
    try {
      parse_ddl(sql, "shop");
      ADD_FAILURE() << "no error for " << sql;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(sql), std::string::npos) << error.what();
    }
  }
  const std::string long_statement = "ALTER TABLE t COMMENT '" + std::string(500, 'x');
  try {
    parse_ddl(long_statement, "shop");
    ADD_FAILURE() << "no error for a long unterminated statement";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(long_statement.substr(0, 200)), std::string::npos);
    EXPECT_EQ(std::string(error.what()).find(long_statement.substr(0, 201)), std::string::npos);
  }
}

}  // namespace
}  // namespace binberg::mysql
