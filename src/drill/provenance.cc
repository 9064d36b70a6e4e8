#include "drill/provenance.h"

#include <arrow/util/config.h>
#include <librdkafka/rdkafka.h>
#include <mysql.h>
#include <sqlite3.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/version.h"
#include "mysql/connection.h"

namespace binberg::drill {
namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of "KEY=..." or "KEY : ..." on a line of TEXT.
std::string field(const std::string& text, const std::string& pattern) {
  std::smatch match;
  const std::regex expression(pattern);
  return std::regex_search(text, match, expression) ? match[1].str() : "unknown";
}

// A JVM service's version from the jar it runs (its class path in /proc/<pid>/cmdline).
std::string jar_version(const std::string& dir, const std::string& service, const std::string& jar_pattern) {
  std::ifstream pid_file(dir + "/" + service + "/" + service + ".pid");
  std::string pid;
  if (!(pid_file >> pid)) return "not running";
  return field(file_text("/proc/" + pid + "/cmdline"), jar_pattern);
}

// The broker runs with a class path of "<lib>/*": its version is that of the kafka-clients jar there.
std::string kafka_version(const std::string& dir) {
  const std::string lib = jar_version(dir, "kafka", R"(-cp\x00([^\x00]*)/\*)");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(lib, error)) {
    const std::string name = entry.path().filename().string();
    const std::string version = field(name, R"(^kafka-clients-(.+)\.jar$)");
    if (version != "unknown") return version;
  }
  return "unknown";
}

nlohmann::json services(const lab::Endpoints& stack) {
  nlohmann::json versions = nlohmann::json::object();
  if (stack.mariadb_endpoint) {
    try {
      mysql::Connection connection =
          mysql::Connection::open(lab::mariadb_options(*stack.mariadb_endpoint, lab::MariadbRole::kAdmin));
      versions["mariadb"] = connection.scalar("SELECT VERSION()").value_or("unknown");
    } catch (const std::exception& error) {
      versions["mariadb"] = std::string("unreachable: ") + error.what();
    }
  }
  if (stack.kafka_bootstrap) versions["kafka"] = kafka_version(stack.dir);
  if (stack.registry_base_url) {
    versions["registry"] =
        jar_version(stack.dir, "registry", R"(apicurio-registry[a-z-]*-([0-9][0-9.]*[0-9])[^/]*\.jar)");
  }
  return versions;
}

nlohmann::json host() {
  utsname names{};
  ::uname(&names);
  const std::string os_release = file_text("/etc/os-release");
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  return {{"cpus", std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))},
          {"cpu_model", field(file_text("/proc/cpuinfo"), R"(model name\s*:\s*([^\n]+))")},
          {"memory_bytes", static_cast<std::int64_t>(pages) * page_size},
          {"os", field(os_release, R"(PRETTY_NAME="([^"]+)\")")},
          {"kernel", std::string(names.sysname) + " " + names.release}};
}

}  // namespace

nlohmann::json detect_provenance(const lab::Endpoints& stack, const std::vector<std::string>& command_line) {
  return {{"binberg", {{"version", kVersion}, {"git_sha", git_sha()}}},
          {"services", services(stack)},
          {"libraries",
           {{"arrow", ARROW_VERSION_STRING},
            {"librdkafka", rd_kafka_version_str()},
            {"mariadb-connector-c", mysql_get_client_info()},
            {"sqlite", sqlite3_libversion()}}},
          {"host", host()},
          {"command_line", command_line}};
}

}  // namespace binberg::drill
