#include "mysql/ddl_statement.h"

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace binberg::mysql {
namespace {

using ChangeKind = ColumnChange::Kind;
using RowsKind = ExistingRowsValue::Kind;

// ---------------------------------------------------------------------------------------------
// Tokens

struct Token {
  enum class Kind {
    kWord,        // a bare identifier or keyword, as written
    kQuotedName,  // a `backtick` identifier, unquoted
    kString,      // a 'string' or "string", unescaped
    kNumber,      // as written: 5, 1.5, .5, 1e-3
    kSymbol,      // one punctuation character
  };
  Kind kind = Kind::kSymbol;
  std::string text;
  char quote = 0;         // kString: ' or "
  std::size_t begin = 0;  // where the token lies in the statement, to quote clauses as written
  std::size_t end = 0;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// MySQL accepts any non-ASCII character in an unquoted identifier, so every byte >= 0x80 counts.
bool is_name_char(char c) {
  return is_letter(c) || is_digit(c) || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

char to_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_upper(a[i]) != to_upper(b[i])) return false;
  }
  return true;
}

// The character a backslash escape stands for inside a string literal. \% and \_ keep their
// backslash, as in MySQL (they matter to LIKE patterns only).
std::string unescape(char escaped) {
  switch (escaped) {
    case '0':
      return std::string(1, '\0');
    case 'b':
      return "\b";
    case 'n':
      return "\n";
    case 'r':
      return "\r";
    case 't':
      return "\t";
    case 'Z':
      return "\x1a";
    case '%':
      return "\\%";
    case '_':
      return "\\_";
    default:
      return std::string(1, escaped);
  }
}

// Splits a statement into tokens and drops its comments. The body of an executable comment
// (/*! ... */, /*!50100 ... */, /*M!100301 ... */) is kept: the server runs it as code.
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view statement) : statement_(statement) {}

  std::vector<Token> tokenize() {
    std::vector<Token> tokens;
    while (pos_ < statement_.size()) {
      const char c = statement_[pos_];
      if (is_space(c)) {
        ++pos_;
      } else if (skip_comment()) {
        // nothing to keep
      } else if (c == '\'' || c == '"' || c == '`') {
        tokens.push_back(read_quoted(c));
      } else if (is_digit(c) || (c == '.' && is_digit(char_at(1)) && !follows_name(tokens))) {
        tokens.push_back(read_number_or_word());
      } else if (is_name_char(c)) {
        tokens.push_back(read_word());
      } else {
        tokens.push_back(Token{Token::Kind::kSymbol, std::string(1, c), 0, pos_, pos_ + 1});
        ++pos_;
      }
    }
    if (in_executable_comment_) fail_unterminated("/*! comment");
    return tokens;
  }

 private:
  [[noreturn]] void fail_unterminated(std::string_view what) const {
    fail("unterminated {} in DDL statement: {}", what, statement_.substr(0, 200));
  }

  char char_at(std::size_t offset) const {
    return pos_ + offset < statement_.size() ? statement_[pos_ + offset] : '\0';
  }

  bool at(std::string_view text) const { return statement_.substr(pos_).starts_with(text); }

  // A '.' right after a name qualifies it (db.5t); anywhere else it may start a number (.5).
  static bool follows_name(const std::vector<Token>& tokens) {
    return !tokens.empty() &&
           (tokens.back().kind == Token::Kind::kWord || tokens.back().kind == Token::Kind::kQuotedName);
  }

  void skip_digits() {
    while (pos_ < statement_.size() && is_digit(statement_[pos_])) ++pos_;
  }

  void skip_to_end_of_line() {
    const std::size_t newline = statement_.find('\n', pos_);
    pos_ = newline == std::string_view::npos ? statement_.size() : newline + 1;
  }

  // Skips a comment, or an executable comment's opening or closing marker, at pos_.
  bool skip_comment() {
    if (at("/*!") || at("/*M!")) {
      pos_ += at("/*!") ? 3 : 4;
      skip_digits();  // the minimum server version
      in_executable_comment_ = true;
      return true;
    }
    if (at("/*")) {
      const std::size_t close = statement_.find("*/", pos_ + 2);
      if (close == std::string_view::npos) fail_unterminated("/* comment");
      pos_ = close + 2;
      return true;
    }
    if (in_executable_comment_ && at("*/")) {
      pos_ += 2;
      in_executable_comment_ = false;
      return true;
    }
    // "--" starts a comment only when followed by whitespace or a control character: 1--1 is 2.
    // (char_at is '\0' past the end, which counts.)
    const bool dash_comment = at("--") && static_cast<unsigned char>(char_at(2)) <= ' ';
    if (dash_comment || at("#")) {
      skip_to_end_of_line();
      return true;
    }
    return false;
  }

  // A 'string', "string" or `name`; a doubled quote stands for itself, and strings take backslash
  // escapes (names do not).
  Token read_quoted(char quote) {
    const std::size_t begin = pos_++;
    std::string value;
    for (;;) {
      if (pos_ >= statement_.size()) fail_unterminated(quote == '`' ? "`quoted name" : "string");
      const char c = statement_[pos_];
      if (c == quote) {
        if (char_at(1) == quote) {
          value += quote;
          pos_ += 2;
          continue;
        }
        ++pos_;
        break;
      }
      if (c == '\\' && quote != '`' && pos_ + 1 < statement_.size()) {
        value += unescape(statement_[pos_ + 1]);
        pos_ += 2;
        continue;
      }
      value += c;
      ++pos_;
    }
    const Token::Kind kind = quote == '`' ? Token::Kind::kQuotedName : Token::Kind::kString;
    return Token{kind, std::move(value), quote == '`' ? '\0' : quote, begin, pos_};
  }

  // digits [. digits] [e [+-] digits]; a digit run that continues with letters is an identifier
  // (1st_col, and hex 0x1F, which callers need not tell from a name).
  Token read_number_or_word() {
    const std::size_t begin = pos_;
    skip_digits();
    bool has_fraction = false;
    if (char_at(0) == '.') {
      has_fraction = true;
      ++pos_;
      skip_digits();
    }
    if (char_at(0) == 'e' || char_at(0) == 'E') {
      const std::size_t sign = (char_at(1) == '+' || char_at(1) == '-') ? 1 : 0;
      if (is_digit(char_at(1 + sign))) {
        pos_ += 1 + sign;
        skip_digits();
      }
    }
    if (!has_fraction && pos_ < statement_.size() && is_name_char(statement_[pos_])) {
      pos_ = begin;
      return read_word();
    }
    return Token{Token::Kind::kNumber, std::string(statement_.substr(begin, pos_ - begin)), 0, begin, pos_};
  }

  Token read_word() {
    const std::size_t begin = pos_;
    while (pos_ < statement_.size() && is_name_char(statement_[pos_])) ++pos_;
    return Token{Token::Kind::kWord, std::string(statement_.substr(begin, pos_ - begin)), 0, begin, pos_};
  }

  std::string_view statement_;
  std::size_t pos_ = 0;
  bool in_executable_comment_ = false;
};

// ---------------------------------------------------------------------------------------------
// Walking tokens

struct TokenRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Reads a range of tokens front to back. Keywords match bare words only, case-insensitively:
// `default` (quoted) is a name, never the keyword.
class Cursor {
 public:
  Cursor(const std::vector<Token>& tokens, TokenRange range) : tokens_(tokens), pos_(range.begin), end_(range.end) {}

  bool at_end() const { return pos_ >= end_; }
  std::size_t position() const { return pos_; }
  TokenRange rest() const { return {pos_, end_}; }

  const Token* peek(std::size_t ahead = 0) const { return pos_ + ahead < end_ ? &tokens_[pos_ + ahead] : nullptr; }

  bool peek_kind(Token::Kind kind, std::size_t ahead = 0) const {
    const Token* token = peek(ahead);
    return token != nullptr && token->kind == kind;
  }

  bool peek_keyword(std::string_view keyword, std::size_t ahead = 0) const {
    return peek_kind(Token::Kind::kWord, ahead) && equals_ignore_case(peek(ahead)->text, keyword);
  }

  bool peek_any_keyword(std::span<const std::string_view> keywords, std::size_t ahead = 0) const {
    for (std::string_view keyword : keywords) {
      if (peek_keyword(keyword, ahead)) return true;
    }
    return false;
  }

  bool peek_any_keyword(std::initializer_list<std::string_view> keywords, std::size_t ahead = 0) const {
    return peek_any_keyword(std::span<const std::string_view>(keywords.begin(), keywords.size()), ahead);
  }

  bool peek_symbol(char symbol, std::size_t ahead = 0) const {
    return peek_kind(Token::Kind::kSymbol, ahead) && peek(ahead)->text[0] == symbol;
  }

  bool accept_keyword(std::string_view keyword) {
    if (!peek_keyword(keyword)) return false;
    ++pos_;
    return true;
  }

  bool accept_any_keyword(std::initializer_list<std::string_view> keywords) {
    if (!peek_any_keyword(keywords)) return false;
    ++pos_;
    return true;
  }

  // A keyword sequence such as IF NOT EXISTS: all of it, or nothing.
  bool accept_keywords(std::initializer_list<std::string_view> keywords) {
    std::size_t ahead = 0;
    for (std::string_view keyword : keywords) {
      if (!peek_keyword(keyword, ahead++)) return false;
    }
    pos_ += keywords.size();
    return true;
  }

  bool accept_symbol(char symbol) {
    if (!peek_symbol(symbol)) return false;
    ++pos_;
    return true;
  }

  // Precondition: !at_end().
  const Token& advance() { return tokens_[pos_++]; }

  // An identifier: bare, `quoted`, or "quoted". A double-quoted string can stand only where a
  // name is expected under sql_mode ANSI_QUOTES, any other mode rejects it there.
  std::optional<std::string> accept_name() {
    const Token* token = peek();
    if (token == nullptr) return std::nullopt;
    const bool is_name = token->kind == Token::Kind::kWord || token->kind == Token::Kind::kQuotedName ||
                         (token->kind == Token::Kind::kString && token->quote == '"');
    if (!is_name) return std::nullopt;
    ++pos_;
    return token->text;
  }

  // One token, or a whole parenthesised group, whose commas and keywords are not ours to read.
  void skip_item() {
    if (at_end()) return;
    int depth = 0;
    do {
      if (peek_symbol('(')) {
        ++depth;
      } else if (peek_symbol(')')) {
        --depth;
      }
      ++pos_;
    } while (!at_end() && depth > 0);
  }

  // Precondition: peek_symbol('('). Skips the group and returns what lies inside the parentheses.
  TokenRange accept_group() {
    const std::size_t inner_begin = pos_ + 1;
    skip_item();
    const bool closed =
        pos_ > inner_begin && tokens_[pos_ - 1].kind == Token::Kind::kSymbol && tokens_[pos_ - 1].text[0] == ')';
    return {inner_begin, closed ? pos_ - 1 : pos_};
  }

 private:
  const std::vector<Token>& tokens_;
  std::size_t pos_;
  std::size_t end_;
};

// The pieces of RANGE between commas outside parentheses: ALTER's specifications, the columns
// of ADD (a INT, b DECIMAL(10,2)).
std::vector<TokenRange> split_on_top_level_commas(const std::vector<Token>& tokens, TokenRange range) {
  std::vector<TokenRange> pieces;
  std::size_t piece_begin = range.begin;
  int depth = 0;
  for (std::size_t i = range.begin; i < range.end; ++i) {
    const Token& token = tokens[i];
    if (token.kind != Token::Kind::kSymbol) continue;
    if (token.text[0] == '(') {
      ++depth;
    } else if (token.text[0] == ')') {
      --depth;
    } else if (token.text[0] == ',' && depth == 0) {
      if (i > piece_begin) pieces.push_back({piece_begin, i});
      piece_begin = i + 1;
    }
  }
  if (range.end > piece_begin) pieces.push_back({piece_begin, range.end});
  return pieces;
}

struct QualifiedName {
  std::optional<std::string> database;
  std::string name;

  std::string to_string() const { return database ? *database + "." + name : name; }
};

std::optional<QualifiedName> accept_qualified_name(Cursor& cursor) {
  std::optional<std::string> first = cursor.accept_name();
  if (!first) return std::nullopt;
  if (!cursor.accept_symbol('.')) return QualifiedName{std::nullopt, std::move(*first)};
  std::optional<std::string> second = cursor.accept_name();
  if (!second) return std::nullopt;
  return QualifiedName{std::move(first), std::move(*second)};
}

// MariaDB's lock wait option: WAIT n | NOWAIT.
void accept_lock_wait(Cursor& cursor) {
  if (cursor.accept_keyword("NOWAIT")) return;
  if (cursor.accept_keyword("WAIT")) cursor.skip_item();
}

// Table options that take a value ([=] value); FORCE, ENABLE/DISABLE KEYS, [DEFAULT] CHARSET and
// COLLATE, DATA/INDEX DIRECTORY are handled apart.
constexpr std::string_view kValuedTableOptions[] = {
    "ENGINE",
    "TYPE",
    "COMMENT",
    "AUTO_INCREMENT",
    "ROW_FORMAT",
    "KEY_BLOCK_SIZE",
    "ALGORITHM",
    "LOCK",
    "STATS_AUTO_RECALC",
    "STATS_PERSISTENT",
    "STATS_SAMPLE_PAGES",
    "PAGE_CHECKSUM",
    "PAGE_COMPRESSED",
    "PAGE_COMPRESSION_LEVEL",
    "TRANSACTIONAL",
    "AVG_ROW_LENGTH",
    "CHECKSUM",
    "TABLE_CHECKSUM",
    "COMPRESSION",
    "CONNECTION",
    "DELAY_KEY_WRITE",
    "ENCRYPTION",
    "ENCRYPTED",
    "ENCRYPTION_KEY_ID",
    "IETF_QUOTES",
    "INSERT_METHOD",
    "MAX_ROWS",
    "MIN_ROWS",
    "PACK_KEYS",
    "PASSWORD",
    "SECONDARY_ENGINE",
    "SECONDARY_ENGINE_ATTRIBUTE",
    "ENGINE_ATTRIBUTE",
    "AUTOEXTEND_SIZE",
    "TABLESPACE",
    "STORAGE",
    "UNION",
    "SEQUENCE",
};

// Whether the rest of a specification is table options only (several may share one
// specification without commas: ENGINE=InnoDB COMMENT 'x'), optionally ending in PARTITION BY.
bool is_table_options(Cursor& cursor) {
  if (cursor.at_end()) return false;
  while (!cursor.at_end()) {
    if (cursor.peek_keyword("PARTITION") && cursor.peek_keyword("BY", 1)) return true;  // repartitioning
    if (cursor.accept_keyword("FORCE") || cursor.accept_keywords({"ENABLE", "KEYS"}) ||
        cursor.accept_keywords({"DISABLE", "KEYS"}) || cursor.accept_keywords({"WITH", "VALIDATION"}) ||
        cursor.accept_keywords({"WITHOUT", "VALIDATION"})) {
      continue;
    }
    const bool has_default = cursor.accept_keyword("DEFAULT");
    if (cursor.accept_keywords({"CHARACTER", "SET"}) || cursor.accept_keyword("CHARSET") ||
        cursor.accept_keyword("COLLATE")) {
      // the value follows
    } else if (has_default) {
      return false;
    } else if (cursor.accept_keywords({"DATA", "DIRECTORY"}) || cursor.accept_keywords({"INDEX", "DIRECTORY"})) {
      // the value follows
    } else if (cursor.peek_any_keyword(kValuedTableOptions)) {
      cursor.advance();
    } else {
      return false;
    }
    cursor.accept_symbol('=');
    if (cursor.at_end()) return false;
    cursor.skip_item();
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Statements

// What a column definition (after the column's name) says, as far as stored rows are concerned.
// CHANGE names the column twice (old, new: it may rename it), MODIFY once.
enum class ColumnClause { kChange, kModify };

struct ColumnDefinition {
  bool has_type = false;
  std::string type;  // as written: the type word, its arguments, UNSIGNED/SIGNED/ZEROFILL/PRECISION
  bool not_null = false;
  bool unique_or_primary = false;  // under ALTER IGNORE, duplicates this creates are deleted
  ExistingRowsValue existing_rows;
};

class DdlParser {
 public:
  DdlParser(std::string_view statement, std::string_view default_database)
      : statement_(statement), default_database_(default_database), tokens_(Tokenizer(statement).tokenize()) {
    while (!tokens_.empty() && tokens_.back().kind == Token::Kind::kSymbol && tokens_.back().text == ";") {
      tokens_.pop_back();
    }
  }

  DdlStatement parse() const {
    Cursor cursor(tokens_, {0, tokens_.size()});
    if (cursor.accept_keyword("ALTER")) return parse_alter_table(cursor);
    if (cursor.accept_keyword("CREATE")) return parse_create_table(cursor);
    if (cursor.accept_keyword("DROP")) return parse_drop_table(cursor);
    if (cursor.accept_keyword("RENAME")) return parse_rename_table(cursor);
    if (cursor.accept_keyword("TRUNCATE")) return parse_truncate_table(cursor);
    return {};
  }

 private:
  std::string text_of(TokenRange range) const {
    if (range.begin >= range.end) return {};
    const std::size_t begin = tokens_[range.begin].begin;
    return std::string(statement_.substr(begin, tokens_[range.end - 1].end - begin));
  }

  std::optional<DdlTable> accept_table(Cursor& cursor) const {
    std::optional<QualifiedName> name = accept_qualified_name(cursor);
    if (!name) return std::nullopt;
    return DdlTable{name->database.value_or(std::string(default_database_)), std::move(name->name)};
  }

  static ColumnChange make_change(ChangeKind kind, const std::string& text) {
    ColumnChange change;
    change.kind = kind;
    change.text = text;
    return change;
  }

  // ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] name [WAIT n | NOWAIT] spec [, spec]...
  DdlStatement parse_alter_table(Cursor& cursor) const {
    bool ignore = false;
    for (;;) {
      if (cursor.accept_keyword("ONLINE")) continue;
      if (!cursor.accept_keyword("IGNORE")) break;
      ignore = true;
    }
    if (!cursor.accept_keyword("TABLE")) return {};  // ALTER DATABASE, VIEW, USER, SEQUENCE...
    DdlStatement result;
    result.kind = DdlStatement::Kind::kAlterTable;
    cursor.accept_keywords({"IF", "EXISTS"});
    std::optional<DdlTable> table = accept_table(cursor);
    if (!table) {
      result.changes.push_back(make_change(ChangeKind::kUnknown, text_of(cursor.rest())));
      return result;
    }
    result.tables.push_back(std::move(*table));
    accept_lock_wait(cursor);
    for (TokenRange spec : split_on_top_level_commas(tokens_, cursor.rest())) {
      parse_alter_spec(spec, ignore, result.changes);
    }
    return result;
  }

  void parse_alter_spec(TokenRange spec, bool ignore, std::vector<ColumnChange>& changes) const {
    Cursor cursor(tokens_, spec);
    const std::string text = text_of(spec);
    if (cursor.accept_keyword("ADD")) {
      parse_add(cursor, text, ignore, changes);
    } else if (cursor.accept_keyword("DROP")) {
      changes.push_back(parse_drop(cursor, text));
    } else if (cursor.accept_keyword("RENAME")) {
      changes.push_back(parse_rename(cursor, text));
    } else if (cursor.accept_keyword("CHANGE")) {
      changes.push_back(parse_change_or_modify(cursor, text, ignore, ColumnClause::kChange));
    } else if (cursor.accept_keyword("MODIFY")) {
      changes.push_back(parse_change_or_modify(cursor, text, ignore, ColumnClause::kModify));
    } else if (cursor.accept_keyword("ALTER")) {
      changes.push_back(parse_alter_column(cursor, text));
    } else {
      changes.push_back(make_change(classify_other_spec(cursor), text));
    }
  }

  // ADD [COLUMN] [IF NOT EXISTS] (name definition | key), or a parenthesised list of them.
  void parse_add(Cursor& cursor, const std::string& text, bool ignore, std::vector<ColumnChange>& changes) const {
    cursor.accept_keyword("COLUMN");
    cursor.accept_keywords({"IF", "NOT", "EXISTS"});
    if (!cursor.peek_symbol('(')) {
      changes.push_back(parse_add_element(cursor, text, ignore));
      return;
    }
    // ADD [COLUMN] (...): as in CREATE TABLE, the list may hold keys as well as columns.
    const TokenRange list = cursor.accept_group();
    if (!cursor.at_end()) {
      changes.push_back(make_change(ChangeKind::kUnknown, text));
      return;
    }
    for (TokenRange element : split_on_top_level_commas(tokens_, list)) {
      Cursor element_cursor(tokens_, element);
      changes.push_back(parse_add_element(element_cursor, text, ignore));
    }
  }

  ColumnChange parse_add_element(Cursor& cursor, const std::string& text, bool ignore) const {
    if (std::optional<ChangeKind> kind = classify_added_key(cursor, ignore)) return make_change(*kind, text);
    std::optional<std::string> name = cursor.accept_name();
    if (!name) return make_change(ChangeKind::kUnknown, text);
    const ColumnDefinition definition = parse_column_definition(cursor);
    if (!definition.has_type || (ignore && definition.unique_or_primary)) {
      return make_change(ChangeKind::kUnknown, text);
    }
    ColumnChange change = make_change(ChangeKind::kAdd, text);
    change.column = std::move(*name);
    change.type = definition.type;
    change.not_null = definition.not_null;
    change.existing_rows = definition.existing_rows;
    return change;
  }

  // What ADD adds when it is not a column (nullopt for a column). The words checked are reserved,
  // so a column cannot be named by them unquoted; PERIOD and SYSTEM are not, hence the lookahead.
  static std::optional<ChangeKind> classify_added_key(const Cursor& cursor, bool ignore) {
    // ALTER IGNORE deletes the rows that duplicate a new unique or primary key, unlogged.
    const ChangeKind unique_kind = ignore ? ChangeKind::kUnknown : ChangeKind::kIndexOrOption;
    const ChangeKind primary_kind = ignore ? ChangeKind::kUnknown : ChangeKind::kPrimaryKey;
    if (cursor.peek_keyword("CONSTRAINT")) {
      std::size_t ahead = 1;
      if (cursor.peek_keyword("IF", ahead)) ahead += 3;                                         // IF NOT EXISTS
      if (!cursor.peek_any_keyword({"PRIMARY", "UNIQUE", "FOREIGN", "CHECK"}, ahead)) ++ahead;  // its name
      if (cursor.peek_keyword("PRIMARY", ahead)) return primary_kind;
      if (cursor.peek_keyword("UNIQUE", ahead)) return unique_kind;
      return ChangeKind::kIndexOrOption;
    }
    if (cursor.peek_keyword("PRIMARY")) return primary_kind;
    if (cursor.peek_keyword("UNIQUE")) return unique_kind;
    if (cursor.peek_any_keyword({"INDEX", "KEY", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PARTITION"})) {
      return ChangeKind::kIndexOrOption;
    }
    if (cursor.peek_keyword("PERIOD") && cursor.peek_keyword("FOR", 1)) return ChangeKind::kIndexOrOption;
    // System versioning adds the row_start/row_end columns that row events then carry.
    if (cursor.peek_keyword("SYSTEM") && cursor.peek_keyword("VERSIONING", 1)) return ChangeKind::kUnknown;
    return std::nullopt;
  }

  // DROP [COLUMN] [IF EXISTS] name [RESTRICT | CASCADE], or DROP of a key, constraint, partition.
  ColumnChange parse_drop(Cursor& cursor, const std::string& text) const {
    if (cursor.accept_keyword("PRIMARY")) return make_change(ChangeKind::kPrimaryKey, text);
    if (cursor.peek_any_keyword({"INDEX", "KEY", "CONSTRAINT"})) {
      cursor.advance();
      cursor.accept_keywords({"IF", "EXISTS"});
      // DROP INDEX `PRIMARY` drops the primary key.
      const std::optional<std::string> name = cursor.accept_name();
      const bool primary = name && equals_ignore_case(*name, "PRIMARY");
      return make_change(primary ? ChangeKind::kPrimaryKey : ChangeKind::kIndexOrOption, text);
    }
    if (cursor.peek_any_keyword({"FOREIGN", "CHECK"}) ||
        (cursor.peek_keyword("PERIOD") && cursor.peek_keyword("FOR", 1))) {
      return make_change(ChangeKind::kIndexOrOption, text);
    }
    // DROP PARTITION deletes the partition's rows and DROP SYSTEM VERSIONING removes columns,
    // neither logged as row events: callers must not take them for harmless options.
    if (cursor.peek_keyword("PARTITION") || (cursor.peek_keyword("SYSTEM") && cursor.peek_keyword("VERSIONING", 1))) {
      return make_change(ChangeKind::kUnknown, text);
    }
    cursor.accept_keyword("COLUMN");
    cursor.accept_keywords({"IF", "EXISTS"});
    std::optional<std::string> name = cursor.accept_name();
    cursor.accept_any_keyword({"RESTRICT", "CASCADE"});
    if (!name || !cursor.at_end()) return make_change(ChangeKind::kUnknown, text);
    ColumnChange change = make_change(ChangeKind::kDrop, text);
    change.column = std::move(*name);
    return change;
  }

  // RENAME COLUMN old TO new | RENAME {INDEX | KEY} old TO new | RENAME [TO | AS] table.
  ColumnChange parse_rename(Cursor& cursor, const std::string& text) const {
    if (cursor.accept_keyword("COLUMN")) {
      std::optional<std::string> old_name = cursor.accept_name();
      const bool has_to = cursor.accept_keyword("TO");
      std::optional<std::string> new_name = cursor.accept_name();
      if (!old_name || !has_to || !new_name || !cursor.at_end()) return make_change(ChangeKind::kUnknown, text);
      ColumnChange change = make_change(ChangeKind::kRename, text);
      change.column = std::move(*old_name);
      change.new_name = std::move(*new_name);
      return change;
    }
    if (cursor.peek_any_keyword({"INDEX", "KEY"})) return make_change(ChangeKind::kIndexOrOption, text);
    if (!cursor.accept_keyword("TO")) cursor.accept_keyword("AS");
    const std::optional<QualifiedName> table = accept_qualified_name(cursor);
    if (!table || !cursor.at_end()) return make_change(ChangeKind::kUnknown, text);
    ColumnChange change = make_change(ChangeKind::kRenameTable, text);
    change.new_name = table->to_string();
    return change;
  }

  // CHANGE [COLUMN] [IF EXISTS] old new definition | MODIFY [COLUMN] [IF EXISTS] name definition.
  // Both redefine the column (kModify); CHANGE may also rename it, which callers see in new_name.
  ColumnChange parse_change_or_modify(Cursor& cursor, const std::string& text, bool ignore, ColumnClause clause) const {
    cursor.accept_keyword("COLUMN");
    cursor.accept_keywords({"IF", "EXISTS"});
    std::optional<std::string> old_name = cursor.accept_name();
    std::optional<std::string> new_name = clause == ColumnClause::kChange ? cursor.accept_name() : old_name;
    if (!old_name || !new_name) return make_change(ChangeKind::kUnknown, text);
    const ColumnDefinition definition = parse_column_definition(cursor);
    if (!definition.has_type || (ignore && definition.unique_or_primary)) {
      return make_change(ChangeKind::kUnknown, text);
    }
    ColumnChange change = make_change(ChangeKind::kModify, text);
    change.column = std::move(*old_name);
    change.new_name = std::move(*new_name);
    change.type = definition.type;
    change.not_null = definition.not_null;
    return change;
  }

  // ALTER [COLUMN] name {SET DEFAULT value | DROP DEFAULT}; ALTER INDEX/CHECK/CONSTRAINT.
  ColumnChange parse_alter_column(Cursor& cursor, const std::string& text) const {
    if (cursor.peek_any_keyword({"INDEX", "KEY", "CHECK", "CONSTRAINT"})) {
      return make_change(ChangeKind::kIndexOrOption, text);  // visibility, IGNORED, ENFORCED
    }
    cursor.accept_keyword("COLUMN");
    cursor.accept_keywords({"IF", "EXISTS"});
    std::optional<std::string> name = cursor.accept_name();
    const bool sets_default = cursor.accept_keywords({"SET", "DEFAULT"}) && !cursor.at_end();
    const bool drops_default = !sets_default && cursor.accept_keywords({"DROP", "DEFAULT"}) && cursor.at_end();
    // Anything else, SET VISIBLE/INVISIBLE included, changes what SELECT * returns.
    if (!name || !(sets_default || drops_default)) return make_change(ChangeKind::kUnknown, text);
    ColumnChange change = make_change(ChangeKind::kSetDefault, text);
    change.column = std::move(*name);
    return change;
  }

  // A specification other than ADD/DROP/RENAME/CHANGE/MODIFY/ALTER: table options and partition
  // maintenance that keeps rows, or kUnknown (ORDER BY, CONVERT TO, DISCARD/IMPORT TABLESPACE,
  // TRUNCATE/EXCHANGE PARTITION, anything unrecognised).
  static ChangeKind classify_other_spec(Cursor& cursor) {
    if (cursor.peek_any_keyword({"ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR", "COALESCE", "REORGANIZE"}) &&
        cursor.peek_keyword("PARTITION", 1)) {
      return ChangeKind::kIndexOrOption;
    }
    if (cursor.peek_any_keyword({"REMOVE", "UPGRADE"}) && cursor.peek_keyword("PARTITIONING", 1)) {
      return ChangeKind::kIndexOrOption;
    }
    return is_table_options(cursor) ? ChangeKind::kIndexOrOption : ChangeKind::kUnknown;
  }

  // type [(args)] attribute...: reads the attributes that decide stored values and skips the rest
  // (UNSIGNED, CHARACTER SET, COMMENT, CHECK (...), REFERENCES ..., ...), taking care to skip the
  // values of those whose values are keywords we look for (ON DELETE SET NULL, COLUMN_FORMAT DEFAULT).
  ColumnDefinition parse_column_definition(Cursor& cursor) const {
    ColumnDefinition definition;
    if (!cursor.peek_kind(Token::Kind::kWord)) return definition;
    definition.has_type = true;
    const std::size_t type_begin = cursor.position();
    const bool serial_type = cursor.accept_keyword("SERIAL");  // BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
    if (!serial_type) cursor.advance();
    if (cursor.peek_symbol('(')) cursor.skip_item();
    while (cursor.accept_any_keyword({"UNSIGNED", "SIGNED", "ZEROFILL", "PRECISION"})) {
    }
    definition.type = text_of({type_begin, cursor.position()});

    bool not_null = serial_type;
    bool primary_key = false;
    bool auto_increment = serial_type;
    bool generated = false;
    bool invisible = false;
    std::optional<ExistingRowsValue> default_value;
    definition.unique_or_primary = serial_type;

    while (!cursor.at_end()) {
      if (cursor.accept_keyword("NOT")) {
        if (cursor.accept_keyword("NULL")) not_null = true;  // else NOT ENFORCED, NOT SECONDARY
      } else if (cursor.accept_keyword("NULL")) {
        not_null = false;
      } else if (cursor.accept_keyword("DEFAULT")) {
        default_value = parse_default_value(cursor);
      } else if (cursor.accept_keyword("AUTO_INCREMENT")) {
        auto_increment = true;
      } else if (cursor.accept_keywords({"SERIAL", "DEFAULT", "VALUE"})) {  // NOT NULL AUTO_INCREMENT UNIQUE
        auto_increment = true;
        not_null = true;
        definition.unique_or_primary = true;
      } else if (cursor.accept_keyword("PRIMARY") || cursor.peek_keyword("KEY")) {
        cursor.accept_keyword("KEY");  // a bare KEY in a column definition is PRIMARY KEY
        primary_key = true;
        definition.unique_or_primary = true;
      } else if (cursor.accept_keyword("UNIQUE")) {
        cursor.accept_keyword("KEY");
        definition.unique_or_primary = true;
      } else if (cursor.accept_keyword("GENERATED")) {
        cursor.accept_keyword("ALWAYS");  // AS follows
        generated = true;
      } else if (cursor.accept_keyword("AS")) {
        generated = true;
        cursor.accept_keyword("ROW");  // MariaDB's ROW START / ROW END
        cursor.skip_item();            // (expression), START or END
      } else if (cursor.accept_keyword("INVISIBLE")) {
        invisible = true;
      } else if (cursor.accept_keyword("ON")) {
        skip_on_clause(cursor);
      } else if (cursor.accept_keyword("AFTER")) {
        cursor.skip_item();  // the column, whatever its name
      } else if (cursor.accept_keyword("CONSTRAINT")) {
        if (!cursor.peek_keyword("CHECK")) cursor.skip_item();  // the constraint's name
      } else if (cursor.accept_keyword("REFERENCES")) {
        accept_qualified_name(cursor);
      } else if (cursor.accept_keywords({"CHARACTER", "SET"}) ||
                 cursor.accept_any_keyword({"CHARSET", "COLLATE", "COMMENT", "COLUMN_FORMAT", "STORAGE", "SRID",
                                            "REF_SYSTEM_ID", "ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE"})) {
        cursor.accept_symbol('=');
        cursor.skip_item();  // the attribute's value
      } else if (cursor.accept_keyword("COMPRESSED")) {
        if (cursor.accept_symbol('=')) cursor.skip_item();
      } else if (cursor.peek_keyword("PARTITION") || cursor.peek_keyword("REMOVE")) {
        break;  // MySQL lets partitioning follow the last specification without a comma
      } else {
        cursor.skip_item();
      }
    }

    definition.not_null = not_null || primary_key;
    if (generated) {
      definition.existing_rows = {RowsKind::kUnknown, "generated column"};
    } else if (auto_increment) {
      definition.existing_rows = {RowsKind::kUnknown, "AUTO_INCREMENT"};
    } else if (invisible) {
      definition.existing_rows = {RowsKind::kUnknown, "INVISIBLE"};
    } else if (default_value) {
      definition.existing_rows = *default_value;
    } else {
      definition.existing_rows = {definition.not_null ? RowsKind::kImplicit : RowsKind::kNull, ""};
    }
    return definition;
  }

  // After ON in a column definition: ON UPDATE CURRENT_TIMESTAMP[(n)], or a foreign key's
  // ON {DELETE | UPDATE} {RESTRICT | CASCADE | SET NULL | SET DEFAULT | NO ACTION}.
  static void skip_on_clause(Cursor& cursor) {
    if (!cursor.accept_keyword("UPDATE")) cursor.accept_keyword("DELETE");
    if (cursor.accept_keyword("SET") || cursor.accept_keyword("NO")) {
      cursor.skip_item();  // NULL, DEFAULT, ACTION
    } else {
      skip_default_operand(cursor);
    }
  }

  // A DEFAULT's value: a constant (kLiteral, kNull) or anything else (kUnknown naming it).
  ExistingRowsValue parse_default_value(Cursor& cursor) const {
    const std::size_t start = cursor.position();
    if (cursor.peek_kind(Token::Kind::kString)) {
      std::string value;  // adjacent strings concatenate: 'a' 'b' is 'ab'
      while (cursor.peek_kind(Token::Kind::kString)) value += cursor.advance().text;
      return {RowsKind::kLiteral, std::move(value)};
    }
    if (cursor.peek_kind(Token::Kind::kNumber)) return {RowsKind::kLiteral, cursor.advance().text};
    if ((cursor.peek_symbol('-') || cursor.peek_symbol('+')) && cursor.peek_kind(Token::Kind::kNumber, 1)) {
      const bool negative = cursor.advance().text == "-";
      return {RowsKind::kLiteral, (negative ? "-" : "") + cursor.advance().text};
    }
    if (cursor.accept_keyword("NULL")) return {RowsKind::kNull, ""};
    if (cursor.accept_keyword("TRUE")) return {RowsKind::kLiteral, "1"};
    if (cursor.accept_keyword("FALSE")) return {RowsKind::kLiteral, "0"};
    if (cursor.peek_any_keyword({"DATE", "TIME", "TIMESTAMP"}) && cursor.peek_kind(Token::Kind::kString, 1)) {
      cursor.advance();  // DATE '2024-01-01' is the string's value
      return {RowsKind::kLiteral, cursor.advance().text};
    }
    skip_default_operand(cursor);
    const std::string text = text_of({start, cursor.position()});
    return {RowsKind::kUnknown, text.empty() ? "DEFAULT" : text};
  }

  // One non-constant DEFAULT operand: (expression), CURRENT_TIMESTAMP(6), NOW(), x'41',
  // _utf8mb4'a', CASE ... END, an identifier.
  static void skip_default_operand(Cursor& cursor) {
    if (cursor.peek_symbol('-') || cursor.peek_symbol('+')) cursor.advance();
    if (cursor.peek_keyword("CASE")) {
      int depth = 0;
      do {
        if (cursor.peek_keyword("CASE")) {
          ++depth;
        } else if (cursor.peek_keyword("END")) {
          --depth;
        }
        cursor.skip_item();
      } while (!cursor.at_end() && depth > 0);
      return;
    }
    const bool is_word = cursor.peek_kind(Token::Kind::kWord);
    cursor.skip_item();
    if (!is_word) return;
    if (cursor.peek_kind(Token::Kind::kString) || cursor.peek_symbol('(')) cursor.skip_item();
  }

  // CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] name ...
  DdlStatement parse_create_table(Cursor& cursor) const {
    cursor.accept_keywords({"OR", "REPLACE"});
    cursor.accept_keyword("TEMPORARY");
    if (!cursor.accept_keyword("TABLE")) return {};  // CREATE INDEX, DATABASE, VIEW...
    cursor.accept_keywords({"IF", "NOT", "EXISTS"});
    return statement_with_tables(DdlStatement::Kind::kCreateTable, accept_table(cursor));
  }

  // DROP [TEMPORARY] TABLE[S] [IF EXISTS] name [, name]... [WAIT n | NOWAIT] [RESTRICT | CASCADE]
  DdlStatement parse_drop_table(Cursor& cursor) const {
    cursor.accept_keyword("TEMPORARY");
    if (!cursor.accept_keyword("TABLE") && !cursor.accept_keyword("TABLES")) return {};
    cursor.accept_keywords({"IF", "EXISTS"});
    DdlStatement result;
    result.kind = DdlStatement::Kind::kDropTable;
    do {
      std::optional<DdlTable> table = accept_table(cursor);
      if (!table) break;
      result.tables.push_back(std::move(*table));
    } while (cursor.accept_symbol(','));
    return result;
  }

  // RENAME TABLE[S] [IF EXISTS] old [WAIT n | NOWAIT] TO new [, old TO new]...
  DdlStatement parse_rename_table(Cursor& cursor) const {
    if (!cursor.accept_keyword("TABLE") && !cursor.accept_keyword("TABLES")) return {};  // RENAME USER
    cursor.accept_keywords({"IF", "EXISTS"});
    DdlStatement result;
    result.kind = DdlStatement::Kind::kRenameTable;
    do {
      std::optional<DdlTable> from = accept_table(cursor);
      accept_lock_wait(cursor);
      const bool has_to = cursor.accept_keyword("TO");
      std::optional<DdlTable> to = accept_table(cursor);
      if (!from || !has_to || !to) break;
      result.tables.push_back(std::move(*from));
      result.tables.push_back(std::move(*to));
    } while (cursor.accept_symbol(','));
    return result;
  }

  // TRUNCATE [TABLE] name
  DdlStatement parse_truncate_table(Cursor& cursor) const {
    cursor.accept_keyword("TABLE");
    return statement_with_tables(DdlStatement::Kind::kTruncateTable, accept_table(cursor));
  }

  static DdlStatement statement_with_tables(DdlStatement::Kind kind, std::optional<DdlTable> table) {
    DdlStatement result;
    result.kind = kind;
    if (table) result.tables.push_back(std::move(*table));
    return result;
  }

  std::string_view statement_;
  std::string_view default_database_;
  std::vector<Token> tokens_;
};

}  // namespace

DdlStatement parse_ddl(std::string_view statement, std::string_view default_database) {
  return DdlParser(statement, default_database).parse();
}

}  // namespace binberg::mysql
