// The control plane's frame parser (bytes from the network: every malformed
// input must end the link, never crash or be misread) and the
// BRAID_FAULT_INJECT spec parser.
#include <gtest/gtest.h>

#include <string>

#include "core/control_frame.h"
#include "core/fault_inject.h"

namespace braid::core {
namespace {

ParseResult parse(const std::string& bytes, ControlFrame* f, size_t* used) {
  return parseControlFrame(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), f, used);
}

TEST(ControlFrame, FaultRoundTripsAndPartialFramesWait) {
  ControlFrame in;
  in.type = ControlType::kFault;
  in.fault = {Code::kTimeout, 5, 0, "rank 5 is silent"};
  std::string bytes;
  encodeControlFrame(in, &bytes);
  encodeControlFrame(ControlFrame{}, &bytes);  // a heartbeat behind it
  ControlFrame out;
  size_t used = 0;
  for (size_t cut = 0; cut < kControlHeaderBytes + in.fault.what.size(); ++cut)
    EXPECT_EQ(parse(bytes.substr(0, cut), &out, &used), ParseResult::kNeedMore) << cut;
  ASSERT_EQ(parse(bytes, &out, &used), ParseResult::kFrame);
  EXPECT_EQ(out.type, ControlType::kFault);
  EXPECT_EQ(out.fault.code, Code::kTimeout);
  EXPECT_EQ(out.fault.culprit, 5);
  EXPECT_EQ(out.fault.reporter, 0);
  EXPECT_EQ(out.fault.what, "rank 5 is silent");
  ASSERT_EQ(parse(bytes.substr(used), &out, &used), ParseResult::kFrame);
  EXPECT_EQ(out.type, ControlType::kHeartbeat);
  EXPECT_EQ(used, kControlHeaderBytes);
}

TEST(ControlFrame, CorruptHeadersAreRejected) {
  ControlFrame beat;
  std::string good;
  encodeControlFrame(beat, &good);
  ControlFrame out;
  size_t used = 0;
  std::string badMagic = good;
  badMagic[0] ^= 1;
  EXPECT_EQ(parse(badMagic, &out, &used), ParseResult::kCorrupt);
  std::string badType = good;
  badType[2] = 9;
  EXPECT_EQ(parse(badType, &out, &used), ParseResult::kCorrupt);
  std::string badCode = good;
  badCode[3] = 77;
  EXPECT_EQ(parse(badCode, &out, &used), ParseResult::kCorrupt);
  std::string textOnBeat = good;
  textOnBeat[12] = 1;  // a heartbeat carries no text
  EXPECT_EQ(parse(textOnBeat, &out, &used), ParseResult::kCorrupt);
  ControlFrame fault;
  fault.type = ControlType::kFault;
  std::string huge;
  encodeControlFrame(fault, &huge);
  huge[14] = 0x7f;  // length far above kControlMaxText: not waited for
  EXPECT_EQ(parse(huge, &out, &used), ParseResult::kCorrupt);
}

TEST(ControlFrame, LongTextIsCut) {
  ControlFrame in;
  in.type = ControlType::kFault;
  in.fault.what.assign(3 * kControlMaxText, 'x');
  std::string bytes;
  encodeControlFrame(in, &bytes);
  ControlFrame out;
  size_t used = 0;
  ASSERT_EQ(parse(bytes, &out, &used), ParseResult::kFrame);
  EXPECT_EQ(out.fault.what.size(), kControlMaxText);
}

TEST(FaultInjection, ParsesSpecsAndRejectsBadOnes) {
  FaultInjection f;
  ASSERT_TRUE(FaultInjection::parse("", &f).isOk());
  EXPECT_FALSE(f.armedFor(0, 1));
  ASSERT_TRUE(FaultInjection::parse("rank=2,op=3,kind=close-socket,peer=0", &f).isOk());
  EXPECT_EQ(f.kind, FaultInjection::Kind::kCloseSocket);
  EXPECT_EQ(f.peer, 0);
  EXPECT_TRUE(f.armedFor(2, 3));
  EXPECT_FALSE(f.armedFor(2, 4));
  EXPECT_FALSE(f.armedFor(1, 3));
  ASSERT_TRUE(FaultInjection::parse("kind=corrupt-header,op=1,rank=0", &f).isOk());
  EXPECT_EQ(f.kind, FaultInjection::Kind::kCorruptHeader);
  for (const char* bad : {"rank=1,op=1", "rank=1,kind=kill", "op=1,kind=stop", "rank=1,op=0,kind=kill",
                          "rank=-1,op=1,kind=kill", "rank=1,op=1,kind=explode", "rank=1,op=x,kind=kill",
                          "rank=1,op=1,kind=kill,colour=red"})
    EXPECT_EQ(FaultInjection::parse(bad, &f).code(), Code::kInvalidArgument) << bad;
}

}  // namespace
}  // namespace braid::core
