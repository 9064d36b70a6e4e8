#include "mysql/connection.h"

#include <mysql.h>

#include "core/error.h"

namespace binberg::mysql {

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
    // 2002/2003/2013: no server listening or connection lost; anything else (auth, unknown db) is final.
    const unsigned code = mysql_errno(handle);
    if (code == 2002 || code == 2003 || code == 2006 || code == 2013) throw ConnectionError(message);
    throw Error(message);
  }
  return connection;
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
    const unsigned long* lengths = mysql_fetch_lengths(result.get());
    Row values;
    values.reserve(columns);
    for (unsigned i = 0; i < columns; ++i) {
      if (row[i] == nullptr) {
        values.emplace_back(std::nullopt);
      } else {
        values.emplace_back(std::string(row[i], lengths[i]));
      }
    }
    set.rows.push_back(std::move(values));
  }
  return set;
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
