#include "core/error.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/failpoint.h"

namespace binberg {
namespace {

TEST(ErrorTest, AnErrorWithoutContextReadsAsItsMessage) {
  const Error error("cannot read /tmp/x: No such file or directory");
  EXPECT_STREQ(error.what(), "cannot read /tmp/x: No such file or directory");
  EXPECT_EQ(error.message(), "cannot read /tmp/x: No such file or directory");
  EXPECT_TRUE(error.context().empty());
}

TEST(ErrorTest, ContextFramesReadOutermostFirstAndKeepTheMessageApart) {
  try {
    with_context("iceberg manifest /t/m.avro",
                 [] { with_context("entry 3", [] { fail("status: invalid value {}", 7); }); });
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "iceberg manifest /t/m.avro: entry 3: status: invalid value 7");
    EXPECT_EQ(error.message(), "status: invalid value 7");
    EXPECT_EQ(error.context(), (std::vector<std::string>{"iceberg manifest /t/m.avro", "entry 3"}));
  }
}

TEST(ErrorTest, WithContextKeepsTheTypeOfTheError) {
  EXPECT_THROW(with_context("config", [] { throw ConfigError("[kafka] brokers: missing"); }), ConfigError);
  EXPECT_THROW(with_context("registry", [] { throw ConnectionError("127.0.0.1:1: refused"); }), ConnectionError);
  try {
    failpoint::arm("error_test.point", failpoint::Trigger{});
    with_context("writing", [] { failpoint::hit("error_test.point"); });
    FAIL() << "the failpoint did not fire";
  } catch (const failpoint::FailpointError& error) {
    EXPECT_EQ(error.name(), "error_test.point");
    EXPECT_STREQ(error.what(), "writing: failpoint error_test.point fired: injected error");
  }
  failpoint::disarm_all();
}

// A subclass's own members travel with it: the very object thrown arrives, with the frame added.
class StatusError : public Error {
 public:
  StatusError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

TEST(ErrorTest, WithContextRethrowsTheSameObject) {
  try {
    with_context("schema subject orders-value", [] { throw StatusError(404, "subject not found"); });
    FAIL() << "no error";
  } catch (const StatusError& error) {
    EXPECT_EQ(error.status(), 404);
    EXPECT_STREQ(error.what(), "schema subject orders-value: subject not found");
  }
}

TEST(ErrorTest, WithContextReturnsWhatTheBodyReturns) {
  EXPECT_EQ(with_context("sum", [] { return 2 + 3; }), 5);
  auto owned = with_context("make", [] { return std::make_unique<int>(7); });
  EXPECT_EQ(*owned, 7);
  int value = 1;
  int& same = with_context("reference", [&]() -> int& { return value; });
  EXPECT_EQ(&same, &value);
}

TEST(ErrorTest, ALazyFrameIsMadeOnlyOnFailure) {
  int made = 0;
  const auto frame = [&] {
    ++made;
    return std::string("row 12");
  };
  with_context(frame, [] {});
  EXPECT_EQ(made, 0);
  try {
    with_context(frame, [] { fail("column 'id': null"); });
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "row 12: column 'id': null");
  }
  EXPECT_EQ(made, 1);
}

TEST(ErrorTest, ExceptionsThatAreNotErrorsPassUntouched) {
  try {
    with_context("parsing", [] { throw std::out_of_range("index 9"); });
    FAIL() << "no error";
  } catch (const std::out_of_range& error) {
    EXPECT_STREQ(error.what(), "index 9");
  }
}

}  // namespace
}  // namespace binberg
