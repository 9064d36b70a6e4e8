#include "mysql/connection.h"

#include <mysql.h>

#include "core/error.h"

namespace binberg::mysql {
namespace {

// Client errors that mean the connection is gone: no server listening, or the connection dropped.
bool connection_lost(unsigned code) { return code == 2002 || code == 2003 || code == 2006 || code == 2013; }

// The COLUMNS values of ROW, of LENGTHS bytes each, as text (nullopt: SQL NULL).
Row row_values(MYSQL_ROW row, const unsigned long* lengths, unsigned columns) {
  Row values;
  values.reserve(columns);
  for (unsigned i = 0; i < columns; ++i) {
    if (row[i] == nullptr) {
      values.emplace_back(std::nullopt);
    } else {
      values.emplace_back(std::string(row[i], lengths[i]));
    }
  }
  return values;
}

}  // namespace

std::string ConnectionOptions::address() const { return fmt::format("{}:{}", host, port); }

void Connection::Closer::operator()(st_mysql* handle) const { mysql_close(handle); }

Connection::Connection(ConnectionOptions options, st_mysql* handle) : options_(std::move(options)), handle_(handle) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::open(const ConnectionOptions& options) {
  MYSQL* handle = mysql_init(nullptr);
  if (handle == nullptr) fail("mysql {}: mysql_init failed (out of memory)", options.address());
  Connection connection(options, handle);
  mysql_optionsv(handle, MYSQL_OPT_CONNECT_TIMEOUT, &options.connect_timeout_seconds);
  mysql_optionsv(handle, MYSQL_OPT_READ_TIMEOUT, &options.read_timeout_seconds);
  mysql_optionsv(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  const TlsOptions& tls = options.tls;
  if (tls.enabled) {
    my_bool enforce = 1;
    my_bool verify = tls.verify_server_cert ? 1 : 0;
    mysql_optionsv(handle, MYSQL_OPT_SSL_ENFORCE, &enforce);
    mysql_optionsv(handle, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    if (!tls.ca_file.empty()) mysql_optionsv(handle, MYSQL_OPT_SSL_CA, tls.ca_file.c_str());
    if (!tls.cert_file.empty()) mysql_optionsv(handle, MYSQL_OPT_SSL_CERT, tls.cert_file.c_str());
    if (!tls.key_file.empty()) mysql_optionsv(handle, MYSQL_OPT_SSL_KEY, tls.key_file.c_str());
  }
  const char* database = options.database.empty() ? nullptr : options.database.c_str();
  if (mysql_real_connect(handle, options.host.c_str(), options.user.c_str(), options.password.c_str(), database,
                         options.port, nullptr, CLIENT_MULTI_RESULTS) == nullptr) {
    const std::string message = fmt::format("mysql {}: cannot connect as '{}': {} (error {})", options.address(),
                                            options.user, mysql_error(handle), mysql_errno(handle));
    // No server listening or connection lost; anything else (auth, unknown db) is final.
    if (connection_lost(mysql_errno(handle))) throw ConnectionError(message);
    throw Error(message);
  }
  return connection;
}

void RowStream::Freer::operator()(st_mysql_res* result) const { mysql_free_result(result); }

RowStream::RowStream(st_mysql* handle, st_mysql_res* result, std::string address)
    : handle_(handle), result_(result), address_(std::move(address)) {}
RowStream::RowStream(RowStream&&) noexcept = default;
RowStream& RowStream::operator=(RowStream&&) noexcept = default;
RowStream::~RowStream() = default;

std::optional<Row> RowStream::next() {
  if (!result_) return std::nullopt;
  MYSQL_ROW row = mysql_fetch_row(result_.get());
  if (row == nullptr) {
    const unsigned code = mysql_errno(handle_);
    if (code != 0) {
      const std::string message = fmt::format("mysql {}: reading a streamed result failed: {} (error {})", address_,
                                              mysql_error(handle_), code);
      result_.reset();
      if (connection_lost(code)) throw ConnectionError(message);
      throw Error(message);
    }
    result_.reset();
    return std::nullopt;
  }
  return row_values(row, mysql_fetch_lengths(result_.get()), mysql_num_fields(result_.get()));
}

void Connection::fail_statement(const std::string& sql) {
  constexpr std::size_t kShown = 200;
  fail("mysql {}: statement failed: {} (error {}) in: {}{}", options_.address(), mysql_error(handle()),
       mysql_errno(handle()), sql.substr(0, kShown), sql.size() > kShown ? "…" : "");
}

void Connection::execute(const std::string& sql) {
  if (mysql_real_query(handle(), sql.data(), sql.size()) != 0) fail_statement(sql);
  // Drain any result so the connection stays usable.
  do {
    if (MYSQL_RES* result = mysql_store_result(handle())) mysql_free_result(result);
  } while (mysql_next_result(handle()) == 0);
}

ResultSet Connection::query(const std::string& sql) {
  if (mysql_real_query(handle(), sql.data(), sql.size()) != 0) fail_statement(sql);
  std::unique_ptr<MYSQL_RES, decltype(&mysql_free_result)> result(mysql_store_result(handle()), &mysql_free_result);
  if (!result) {
    if (mysql_errno(handle()) != 0) fail_statement(sql);
    fail("mysql {}: statement returned no result set: {}", options_.address(), sql);
  }
  ResultSet set;
  const unsigned columns = mysql_num_fields(result.get());
  MYSQL_FIELD* fields = mysql_fetch_fields(result.get());
  for (unsigned i = 0; i < columns; ++i) set.columns.emplace_back(fields[i].name);
  while (MYSQL_ROW row = mysql_fetch_row(result.get())) {
    set.rows.push_back(row_values(row, mysql_fetch_lengths(result.get()), columns));
  }
  return set;
}

RowStream Connection::stream(const std::string& sql) {
  if (mysql_real_query(handle(), sql.data(), sql.size()) != 0) fail_statement(sql);
  MYSQL_RES* result = mysql_use_result(handle());
  if (result == nullptr) {
    if (mysql_errno(handle()) != 0) fail_statement(sql);
    fail("mysql {}: statement returned no result set: {}", options_.address(), sql);
  }
  return RowStream(handle(), result, options_.address());
}

std::optional<std::string> Connection::scalar(const std::string& sql) {
  ResultSet set = query(sql);
  if (set.rows.size() != 1 || set.columns.size() != 1) {
    fail("mysql {}: expected one value from '{}', got {} rows of {} columns", options_.address(), sql, set.rows.size(),
         set.columns.size());
  }
  return set.rows[0][0];
}

std::string Connection::escape(const std::string& value) {
  std::string out(value.size() * 2 + 1, '\0');
  out.resize(mysql_real_escape_string(handle(), out.data(), value.data(), value.size()));
  return out;
}

}  // namespace binberg::mysql
