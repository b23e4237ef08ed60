// UniqueId::unpack on arbitrary 128-byte ids (what a user passes to
// braidCommInitRank, possibly damaged on its way). Input: a control byte (bit 0:
// repair the checksum so the address and secret parsing behind it is reached),
// then the id, zero-padded to 128 bytes.
// Properties: unpack never crashes; an accepted id packs back to an id that
// unpacks to the same root and secret.
#include <cstring>

#include "core/bootstrap/unique_id.h"
#include "fixups.h"
#include "fuzz_input.h"
#include "fuzz_target.h"

using braid::bootstrap::UniqueId;

BRAID_FUZZ_TARGET(unique_id) {
  braid::fuzz::FuzzInput in(data, size);
  uint8_t control = in.u8();
  std::vector<uint8_t> bytes = in.padded(UniqueId::kBytes);
  if (control & 1) braid::fuzz::repairUniqueIdCheck(bytes.data());

  UniqueId id;
  if (!UniqueId::unpack(bytes.data(), &id).isOk()) return 0;
  uint8_t again[UniqueId::kBytes];
  id.pack(again);
  UniqueId back;
  BRAID_FUZZ_CHECK(UniqueId::unpack(again, &back).isOk(), "a packed accepted id unpacks");
  BRAID_FUZZ_CHECK(back.secret == id.secret, "secret survives pack/unpack");
  BRAID_FUZZ_CHECK(back.root.length == id.root.length &&
                       std::memcmp(&back.root.storage, &id.root.storage, id.root.length) == 0,
                   "root address survives pack/unpack");
  (void)id.root.toString();
  return 0;
}
