#include <libpq-fe.h>

#include <map>
#include <memory>

#include "core/error.h"
#include "iceberg/catalog_retry.h"
#include "iceberg/sql_connection.h"

namespace binberg::iceberg {
namespace {

// '?' placeholders -> $1, $2, ... (the catalog's SQL has no '?' inside literals).
std::string numbered_placeholders(const std::string& sql) {
  std::string out;
  int number = 0;
  for (char c : sql) {
    if (c == '?') {
      out += "$" + std::to_string(++number);
    } else {
      out += c;
    }
  }
  return out;
}

class PostgresConnection : public SqlConnection {
 public:
  PostgresConnection(PGconn* connection, std::string description)
      : connection_(connection), description_(std::move(description)) {}
  ~PostgresConnection() override { PQfinish(connection_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& parameters) override {
    const auto result = run(sql, parameters);
    std::vector<SqlRow> rows;
    for (int r = 0; r < PQntuples(result.get()); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(result.get()); ++c) {
        if (PQgetisnull(result.get(), r, c)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(
              std::string(PQgetvalue(result.get(), r, c), static_cast<std::size_t>(PQgetlength(result.get(), r, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  std::int64_t execute(const std::string& sql, const std::vector<SqlValue>& parameters) override {
    const auto result = run(sql, parameters);
    const char* changed = PQcmdTuples(result.get());
    return changed[0] == '\0' ? 0 : std::stoll(changed);
  }

  // Row locks of the UPDATEs serialize concurrent commits; READ COMMITTED re-checks the WHERE
  // clause against the committed row, so a lost race updates 0 rows (a conflict), never both.
  void begin_write() override { run("BEGIN", {}); }
  void commit() override { run("COMMIT", {}); }
  void rollback() noexcept override {
    if (PQstatus(connection_) != CONNECTION_OK) return;  // the server rolled it back when the connection went
    PGresult* result = PQexec(connection_, "ROLLBACK");
    PQclear(result);
  }
  // PQreset connects again with the parameters of the first connection (password included, never
  // held in a string of ours), then the session gets its settings again.
  void reconnect() override {
    PQreset(connection_);
    if (PQstatus(connection_) != CONNECTION_OK) {
      throw ConnectionLost(fmt::format("catalog {}: cannot reconnect: {}", description_, error_message()));
    }
    prepare_session();
  }
  const std::string& description() const override { return description_; }

  // Every synchronous_commit but off flushes a commit locally before acknowledging it: a session
  // (or a server) asking for off gets on.
  void prepare_session() {
    if (query("SHOW synchronous_commit", {}).at(0).at(0).value_or("") == "off")
      execute("SET synchronous_commit = on", {});
  }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> run(const std::string& sql, const std::vector<SqlValue>& parameters) {
    std::vector<const char*> values;
    for (const auto& parameter : parameters) values.push_back(parameter ? parameter->c_str() : nullptr);
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexecParams(connection_, numbered_placeholders(sql).c_str(), static_cast<int>(values.size()), nullptr,
                     values.data(), nullptr, nullptr, 0),
        &PQclear);
    const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const char* sqlstate = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
      const std::string message =
          fmt::format("catalog {}: {}{} (in: {})", description_, error_message(),
                      sqlstate ? fmt::format(" (SQLSTATE {})", sqlstate) : std::string(), sql.substr(0, 120));
      const ConnectionHealth health =
          PQstatus(connection_) == CONNECTION_OK ? ConnectionHealth::kOk : ConnectionHealth::kBad;
      switch (classify_postgres_failure(health, sqlstate ? sqlstate : "")) {
        case FailureKind::kReconnect:
          throw ConnectionLost(message);
        case FailureKind::kRetry:
          throw DatabaseBusy(message);
        case FailureKind::kFatal:
          throw Error(message);
      }
    }
    return result;
  }

  std::string error_message() const {
    std::string message = PQerrorMessage(connection_);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return message;
  }

  PGconn* connection_;
  std::string description_;
};

}  // namespace

std::unique_ptr<SqlConnection> open_postgres(const CatalogOptions& options) {
  // libpq parses the URI; the password and extra properties go in as separate keywords so they
  // never need to be part of a string that might be logged.
  std::vector<std::string> keys = {"dbname"};
  std::vector<std::string> values = {options.uri};
  if (!options.password.empty()) {
    keys.emplace_back("password");
    values.push_back(options.password);
  }
  for (const auto& [key, value] : options.connection_properties) {
    keys.push_back(key);
    values.push_back(value);
  }
  if (std::none_of(keys.begin(), keys.end(), [](const std::string& key) { return key == "connect_timeout"; })) {
    keys.emplace_back("connect_timeout");
    values.emplace_back("10");
  }
  // The catalog's CREATE TABLE IF NOT EXISTS would print a NOTICE to stderr at every open.
  if (std::none_of(keys.begin(), keys.end(), [](const std::string& key) { return key == "options"; })) {
    keys.emplace_back("options");
    values.emplace_back("-c client_min_messages=warning");
  }
  std::vector<const char*> key_pointers, value_pointers;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    key_pointers.push_back(keys[i].c_str());
    value_pointers.push_back(values[i].c_str());
  }
  key_pointers.push_back(nullptr);
  value_pointers.push_back(nullptr);
  PGconn* connection = PQconnectdbParams(key_pointers.data(), value_pointers.data(), /*expand_dbname=*/1);
  // The description names host, port and database only.
  std::string description = "postgresql://";
  if (connection != nullptr) {
    description += fmt::format("{}:{}/{}", PQhost(connection) ? PQhost(connection) : "",
                               PQport(connection) ? PQport(connection) : "", PQdb(connection) ? PQdb(connection) : "");
  }
  if (connection == nullptr || PQstatus(connection) != CONNECTION_OK) {
    const std::string message = connection != nullptr ? PQerrorMessage(connection) : "out of memory";
    PQfinish(connection);
    throw ConnectionError(fmt::format("catalog {}: cannot connect: {}", description, message));
  }
  auto postgres = std::make_unique<PostgresConnection>(connection, std::move(description));
  const auto setting = [&](const std::string& name) {
    return postgres->query("SHOW " + name, {}).at(0).at(0).value_or("");
  };
  postgres->prepare_session();
  std::map<std::string, std::string> settings;
  for (const char* name : {"fsync", "full_page_writes", "synchronous_commit"}) settings[name] = setting(name);
  require_durable(postgres->description(), postgres_durability_problems(settings), options.durability);
  return postgres;
}

}  // namespace binberg::iceberg
