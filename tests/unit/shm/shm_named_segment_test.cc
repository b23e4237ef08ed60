// Named segments (transports/shm/segment.h), which the shared slots of a
// one-host communicator use: peers open them by name, the name goes away when
// the creator unlinks it, and a later run removes names whose creator died.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "shm_test_util.h"
#include "transports/shm/segment.h"

namespace braid::transport::testing {
namespace {

bool listed(const std::string& name) {  // name as shm_open takes it ("/braid-shm-...")
  const auto entries = shmEntries();
  return std::find(entries.begin(), entries.end(), name.substr(1)) != entries.end();
}

TEST(ShmNamedSegment, PeersShareItByNameUntilItIsUnlinked) {
  std::string name;
  shm::Mapping mine;
  ASSERT_TRUE(shm::createNamedSegment(4096, &name, &mine).isOk());
  EXPECT_EQ(name.rfind(std::string("/") + shm::kNamePrefix + std::to_string(getpid()) + "-", 0), 0u) << name;
  EXPECT_TRUE(listed(name));

  shm::Mapping theirs;
  ASSERT_TRUE(shm::openNamedSegment(name, 4096, &theirs).isOk());
  std::memcpy(mine.get(), "hello", 6);
  EXPECT_STREQ(static_cast<const char*>(theirs.get()), "hello") << "one memory, two mappings";

  shm::Mapping wrongSize;
  EXPECT_FALSE(shm::openNamedSegment(name, 8192, &wrongSize).isOk())
      << "a size that does not match is refused";
  shm::unlinkSegment(name);
  EXPECT_FALSE(listed(name));
  shm::Mapping late;
  EXPECT_FALSE(shm::openNamedSegment(name, 4096, &late).isOk());
  EXPECT_STREQ(static_cast<const char*>(theirs.get()), "hello") << "mappings outlive the name";
}

TEST(ShmNamedSegment, OnlyBraidNamesAreOpened) {
  shm::Mapping m;
  for (const char* bad : {"/etc-passwd", "braid-shm-1-x", "/braid-shm-1/../x", ""})
    EXPECT_EQ(shm::openNamedSegment(bad, 4096, &m).code(), Code::kInvalidArgument) << bad;
}

TEST(ShmNamedSegment, LeftoversOfDeadCreatorsAreRemovedOthersKept) {
  // A child creates a named segment and dies without unlinking it, as a rank
  // SIGKILLed in the window would.
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string name;
    shm::Mapping m;
    if (!shm::createNamedSegment(4096, &name, &m).isOk()) _exit(1);
    (void)!write(pipeFds[1], name.c_str(), name.size() + 1);
    _exit(0);
  }
  close(pipeFds[1]);
  char buf[256] = {0};
  ASSERT_GT(read(pipeFds[0], buf, sizeof(buf) - 1), 0);
  close(pipeFds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string leftover = buf;
  ASSERT_TRUE(listed(leftover)) << leftover;

  std::string live;  // this process's own, alive: not a leftover
  shm::Mapping m;
  ASSERT_TRUE(shm::createNamedSegment(4096, &live, &m).isOk());
  EXPECT_GE(shm::removeLeftoverSegments(), 1);
  EXPECT_FALSE(listed(leftover)) << "the dead creator's name was removed";
  EXPECT_TRUE(listed(live)) << "a live creator's name was kept";
  shm::unlinkSegment(live);
}

}  // namespace
}  // namespace braid::transport::testing
