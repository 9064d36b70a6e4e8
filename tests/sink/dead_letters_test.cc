// Dead letters' pure parts: where a record came from, as the headers of a diverted record say it.

#include "sink/dead_letters.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.h"

namespace binberg::sink {
namespace {

TEST(RecordOriginTest, PrintsAndParsesBack) {
  const RecordOrigin origin{"cdc.shop.orders", 2, 1234567890123};
  EXPECT_EQ(origin.to_string(), "cdc.shop.orders/2@1234567890123");
  EXPECT_EQ(RecordOrigin::parse(origin.to_string()), origin);
  // Topic names may hold dots and dashes; the last '/' and '@' split.
  EXPECT_EQ(RecordOrigin::parse("a/b.c-d/0@7"), (RecordOrigin{"a/b.c-d", 0, 7}));
}

TEST(RecordOriginTest, RefusesWhatIsNotAnOriginNamingIt) {
  for (const char* bad :
       {"", "topic", "topic/1", "topic@5", "/1@5", "topic/x@5", "topic/1@y", "topic/1@5z", "topic/1x@5"}) {
    try {
      RecordOrigin::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("'") + bad + "'"), std::string::npos) << error.what();
    }
  }
}

TEST(DivertedHeadersTest, KeepTheOriginalsAndAddWhyAndWhere) {
  kafka::ConsumedRecord record;
  record.topic = "cdc.shop.orders";
  record.partition = 1;
  record.offset = 42;
  record.timestamp_ms = 1796527968000;
  record.headers = {{"binberg.event_id", "0-1-7#0"}, {"binberg.txn", "0-1-7"}};
  const auto headers = diverted_headers(record, "avro wire format: magic byte 0x01");
  ASSERT_EQ(headers.size(), 5u);
  EXPECT_EQ(headers[0].name, "binberg.event_id") << "the original headers first, in order";
  EXPECT_EQ(headers[1].value, "0-1-7");
  std::map<std::string, std::string> added;
  for (std::size_t i = 2; i < headers.size(); ++i) added[headers[i].name] = headers[i].value;
  EXPECT_EQ(added[std::string(kErrorHeader)], "avro wire format: magic byte 0x01");
  EXPECT_EQ(RecordOrigin::parse(added[std::string(kOriginHeader)]), (RecordOrigin{"cdc.shop.orders", 1, 42}));
  EXPECT_EQ(added[std::string(kOriginTimestampHeader)], "1796527968000");
}

}  // namespace
}  // namespace binberg::sink
