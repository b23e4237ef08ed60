// IbPath: how a queue pair's packets travel, as the fabric's operators set it
// (NCCL_IB_TC / NCCL_IB_SL / NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT in NCCL):
// on RoCE the traffic class puts RDMA in the switches' lossless (PFC)
// priority, without which a congested port drops its packets and every loss
// costs a retransmission timeout; on InfiniBand the service level picks the
// virtual lane. Read once per transport from BRAID_IB_*; a value out of the
// verbs' range is an error at init, not a silent default.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace braid::ibverbs {

struct IbPath {
  uint8_t trafficClass = 0;  // BRAID_IB_TC: the GRH traffic class (RoCE: DSCP << 2 | ECN)
  uint8_t serviceLevel = 0;  // BRAID_IB_SL: 0-15
  // BRAID_IB_TIMEOUT: retransmission timeout 4.096 us * 2^timeout (14: 67 ms),
  // 1-31; BRAID_IB_RETRY_CNT: tries before the connection fails, 0-7.
  uint8_t timeout = 14;
  uint8_t retryCount = 7;

  static Status fromEnvironment(IbPath* out);
};

}  // namespace braid::ibverbs
