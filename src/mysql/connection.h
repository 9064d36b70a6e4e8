#pragma once

// A client connection to MySQL/MariaDB over MariaDB Connector/C, with TLS options passed through.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct st_mysql;
struct st_mysql_res;

namespace binberg::mysql {

struct TlsOptions {
  bool enabled = false;            // require TLS for the connection
  bool verify_server_cert = true;  // check the server certificate and host name (when enabled)
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 3306;
  std::string user;
  std::string password;  // never logged
  std::string database;
  unsigned connect_timeout_seconds = 10;
  unsigned read_timeout_seconds = 60;
  TlsOptions tls;

  std::string address() const;  // "host:port", for messages
};

using Row = std::vector<std::optional<std::string>>;

struct ResultSet {
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

// The rows of one statement as the server sends them (mysql_use_result): memory stays bounded by a
// row however large the result. The connection runs nothing else until the stream has ended or
// is destroyed (which discards the rows not read), and the server waits for the client to read.
class RowStream {
 public:
  RowStream(RowStream&&) noexcept;
  RowStream& operator=(RowStream&&) noexcept;
  ~RowStream();

  // The next row, or nullopt at the end. Throws Error (ConnectionError when the connection is
  // lost) naming the server.
  std::optional<Row> next();

 private:
  friend class Connection;
  struct Freer {
    void operator()(st_mysql_res* result) const;
  };
  RowStream(st_mysql* handle, st_mysql_res* result, std::string address);

  st_mysql* handle_;  // owned by the Connection, whose handle does not move with it
  std::unique_ptr<st_mysql_res, Freer> result_;
  std::string address_;
};

class Connection {
 public:
  // Connects; throws Error naming the server and the client's error text.
  static Connection open(const ConnectionOptions& options);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  // Runs a statement that returns no rows.
  void execute(const std::string& sql);
  // Runs a statement and returns its whole result.
  ResultSet query(const std::string& sql);
  // Runs a statement and streams its rows; the stream must end before this connection is used or
  // destroyed.
  RowStream stream(const std::string& sql);
  // The single value of a one-row, one-column query; throws if the shape differs.
  std::optional<std::string> scalar(const std::string& sql);
  std::string escape(const std::string& value);

  const ConnectionOptions& options() const { return options_; }
  st_mysql* handle() { return handle_.get(); }

 private:
  struct Closer {
    void operator()(st_mysql* handle) const;
  };
  Connection(ConnectionOptions options, st_mysql* handle);
  [[noreturn]] void fail_statement(const std::string& sql);

  ConnectionOptions options_;
  std::unique_ptr<st_mysql, Closer> handle_;
};

}  // namespace binberg::mysql
