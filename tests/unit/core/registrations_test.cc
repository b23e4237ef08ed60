// Registrations (core/registrations.h): which transports register a buffer,
// which handle a message gets, and when the transports deregister.
#include "core/registrations.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace braid::core {
namespace {

// A transport that only registers: each handle is a fresh int naming its
// registration; it counts what it was asked.
class CountingTransport final : public transport::Transport {
 public:
  explicit CountingTransport(bool registers, int failAfter = -1)
      : registers_(registers), failAfter_(failAfter) {}
  const char* name() const override { return "counting"; }
  transport::Capabilities capabilities() const override {
    transport::Capabilities c;
    c.registersMemory = registers_;
    return c;
  }
  int deviceCount() const override { return 1; }
  Status deviceProperties(int, transport::DeviceProperties*) const override { return Status::ok(); }
  Status listen(int, transport::Handle*, std::unique_ptr<transport::ListenComm>*) override {
    return notSupported("test");
  }
  Status connect(int, const transport::Handle&, uint64_t, std::unique_ptr<transport::SendComm>*) override {
    return notSupported("test");
  }
  Status accept(transport::ListenComm&, std::unique_ptr<transport::RecvComm>*, uint64_t*) override {
    return notSupported("test");
  }
  Status test(transport::Request*, bool*, size_t*) override { return notSupported("test"); }
  Status wait(int) override { return Status::ok(); }
  Status regMr(void* data, size_t size, void** mhandle) override {
    if (failAfter_ >= 0 && registered >= failAfter_) return systemError("ibv_reg_mr", 12);
    ++registered;
    lastData = data;
    lastSize = size;
    *mhandle = new int(registered);
    return Status::ok();
  }
  Status deregMr(void* mhandle) override {
    ++deregistered;
    delete static_cast<int*>(mhandle);
    return Status::ok();
  }
  int registered = 0, deregistered = 0;
  void* lastData = nullptr;
  size_t lastSize = 0;

 private:
  bool registers_;
  int failAfter_;
};

int idOf(void* mhandle) { return mhandle ? *static_cast<int*>(mhandle) : 0; }

// The one range test all registered memory uses (base/address_range.h),
// at its edges and at the top of the address space, where begin + size and
// data + bytes overflow.
TEST(AddressRange, CoversExactlyTheBuffersInside) {
  const uintptr_t begin = 0x1000;
  auto at = [](uintptr_t a) { return reinterpret_cast<const void*>(a); };
  EXPECT_TRUE(rangeCovers(begin, 256, at(begin), 256));
  EXPECT_TRUE(rangeCovers(begin, 256, at(begin + 255), 1));
  EXPECT_TRUE(rangeCovers(begin, 256, at(begin + 256), 0));
  EXPECT_FALSE(rangeCovers(begin, 256, at(begin - 1), 1));
  EXPECT_FALSE(rangeCovers(begin, 256, at(begin), 257));
  EXPECT_FALSE(rangeCovers(begin, 256, at(begin + 255), 2));
  EXPECT_FALSE(rangeCovers(begin, 256, at(begin + 257), 0));
  EXPECT_FALSE(rangeCovers(begin, 256, at(begin + 8), SIZE_MAX));  // data + bytes wraps
  const uintptr_t top = UINTPTR_MAX - 255;                         // the last 256 bytes
  EXPECT_TRUE(rangeCovers(top, 256, at(top + 128), 128));
  EXPECT_FALSE(rangeCovers(top, 256, at(top + 128), 129));
  EXPECT_FALSE(rangeCovers(top, 256, at(0), 16));
}

TEST(Registrations, OnlyTransportsThatGainRegisterAndEachMessageFindsItsRange) {
  CountingTransport ib(true), tcp(false);
  Registrations regs({&ib, &tcp});
  EXPECT_EQ(regs.snapshot(), nullptr);

  std::vector<char> a(4096), b(1024);
  void* ha = nullptr;
  void* hb = nullptr;
  ASSERT_TRUE(regs.add(a.data(), a.size(), &ha).isOk());
  ASSERT_TRUE(regs.add(b.data(), b.size(), &hb).isOk());
  EXPECT_NE(ha, nullptr);
  EXPECT_NE(ha, hb);
  EXPECT_EQ(ib.registered, 2);
  EXPECT_EQ(tcp.registered, 0);
  EXPECT_EQ(ib.lastData, b.data());
  EXPECT_EQ(ib.lastSize, b.size());
  EXPECT_EQ(regs.count(), 2u);

  auto table = regs.snapshot();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(idOf(Registrations::find(*table, &ib, a.data(), a.size())), 1);   // all of it
  EXPECT_EQ(idOf(Registrations::find(*table, &ib, a.data() + 4000, 96)), 1);  // its end
  EXPECT_EQ(idOf(Registrations::find(*table, &ib, b.data() + 1, 10)), 2);
  EXPECT_EQ(Registrations::find(*table, &ib, a.data() + 4000, 97), nullptr);  // one byte past
  EXPECT_EQ(Registrations::find(*table, &ib, a.data() - 1, 2), nullptr);      // one before
  EXPECT_EQ(Registrations::find(*table, &tcp, a.data(), 16), nullptr);        // registered nothing
  char elsewhere[64] = {};
  EXPECT_EQ(Registrations::find(*table, &ib, elsewhere, sizeof(elsewhere)), nullptr);
}

TEST(Registrations, ARangeRemovedWhileAnOpHoldsTheTableIsDeregisteredWhenTheOpLetsGo) {
  CountingTransport ib(true);
  Registrations regs({&ib});
  std::vector<char> a(256);
  void* handle = nullptr;
  ASSERT_TRUE(regs.add(a.data(), a.size(), &handle).isOk());
  auto held = regs.snapshot();  // a running op's
  ASSERT_TRUE(regs.remove(handle).isOk());
  EXPECT_EQ(regs.snapshot(), nullptr);
  EXPECT_EQ(regs.count(), 0u);
  EXPECT_EQ(ib.deregistered, 0);
  EXPECT_EQ(idOf(Registrations::find(*held, &ib, a.data(), a.size())), 1);
  held.reset();
  EXPECT_EQ(ib.deregistered, 1);
}

TEST(Registrations, UnknownOrRepeatedRemovalsAreRefusedAndChangeNothing) {
  CountingTransport ib(true);
  Registrations regs({&ib});
  int stranger = 0;
  EXPECT_EQ(regs.remove(&stranger).code(), Code::kInvalidArgument);
  std::vector<char> a(256), b(256);
  void *ha = nullptr, *hb = nullptr;
  ASSERT_TRUE(regs.add(a.data(), a.size(), &ha).isOk());
  ASSERT_TRUE(regs.add(b.data(), b.size(), &hb).isOk());
  Status st = regs.remove(&stranger);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("not a registration"), std::string::npos) << st.message();
  ASSERT_TRUE(regs.remove(ha).isOk());
  EXPECT_EQ(regs.remove(ha).code(), Code::kInvalidArgument);  // twice
  EXPECT_EQ(ib.deregistered, 1);
  auto table = regs.snapshot();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(idOf(Registrations::find(*table, &ib, b.data(), b.size())), 2);
  EXPECT_EQ(Registrations::find(*table, &ib, a.data(), a.size()), nullptr);
}

TEST(Registrations, OverlappingRangesAreEachTheirOwn) {
  CountingTransport ib(true);
  Registrations regs({&ib});
  std::vector<char> a(1024);
  void *whole = nullptr, *half = nullptr;
  ASSERT_TRUE(regs.add(a.data(), a.size(), &whole).isOk());
  ASSERT_TRUE(regs.add(a.data() + 512, 512, &half).isOk());
  ASSERT_TRUE(regs.remove(whole).isOk());
  auto table = regs.snapshot();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(idOf(Registrations::find(*table, &ib, a.data() + 600, 100)), 2);
  EXPECT_EQ(Registrations::find(*table, &ib, a.data(), 100), nullptr);
}

// A transport that fails to register leaves no half-made registration: the
// transports before it deregister again, and the table is as it was.
TEST(Registrations, AFailedRegistrationUndoesTheTransportsThatRegistered) {
  CountingTransport first(true), second(true, /*failAfter=*/0);
  Registrations regs({&first, &second});
  std::vector<char> a(256);
  void* handle = &a;
  Status st = regs.add(a.data(), a.size(), &handle);
  EXPECT_EQ(st.code(), Code::kSystemError);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(first.registered, 1);
  EXPECT_EQ(first.deregistered, 1);
  EXPECT_EQ(regs.snapshot(), nullptr);
}

TEST(Registrations, TheCommunicatorsDestructionDeregistersWhatIsLeft) {
  CountingTransport ib(true);
  std::vector<char> a(256), b(256);
  {
    Registrations regs({&ib});
    void *ha = nullptr, *hb = nullptr;
    ASSERT_TRUE(regs.add(a.data(), a.size(), &ha).isOk());
    ASSERT_TRUE(regs.add(b.data(), b.size(), &hb).isOk());
  }
  EXPECT_EQ(ib.deregistered, 2);
}

}  // namespace
}  // namespace braid::core
