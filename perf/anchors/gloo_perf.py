#!/usr/bin/python3
"""gloo-perf: the Gloo anchor for braid-perf, through Debian's PyTorch
(python3-torch, torch.distributed with the gloo backend, CPU tensors).

The same sweep as `braid-perf <coll>` and mpi-perf (torch_perf.py, shared with
nccl_perf.py, says how it runs, checks and times). Started once per rank by any
launcher that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (braid-run
and `fabric run` both do; torchrun too):

  build/tools/braid-run/braid-run -n 4 -- /usr/bin/python3 perf/anchors/gloo_perf.py allreduce -b 8 -e 1M -f 4

Gloo picks its interface from GLOO_SOCKET_IFNAME (lo on loopback, fab0 on the
fabric). Collectives: allreduce (all_reduce), allgather (all_gather into views
of one tensor: gloo has no all_gather_into_tensor), alltoall (all_to_all_single),
broadcast, gather and scatter (root 0; gather and scatter on lists of views of
one tensor, torch's only form of them). reducescatter: torch's gloo backend has
no reduce_scatter; the program says so and exits 3, and the sweep reports it
as unsupported.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_perf  # noqa: E402

if __name__ == "__main__":
    sys.exit(torch_perf.main(sys.argv[1:], "gloo", __doc__.split("\n\n")[0]))
