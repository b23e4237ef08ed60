#!/usr/bin/env python3
"""nccl-perf: the NCCL anchor for braid-perf, through PyTorch's bundled NCCL
(torch.distributed with the nccl backend, CUDA tensors).

The same sweep as `braid-perf <coll> --memory device` and gloo_perf.py
(torch_perf.py, shared with it, says how it runs, checks and times). Started
once per rank by any launcher that sets RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT (braid-run does; torchrun too). Rank r uses GPU
LOCAL_RANK % device count: with one GPU every rank shares device 0.

NCCL refuses two ranks on one GPU of one host ("Duplicate GPU detected").
--hostid-prefix P sets NCCL_HOSTID=P<rank> per rank before NCCL starts, so
NCCL takes each rank for a host of its own and joins them with its network
transport; the launcher pins that to sockets on loopback
(runners.py: NCCL_NET=Socket, NCCL_SOCKET_IFNAME=lo):

  NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN \\
    build/tools/braid-run/braid-run -n 2 -- /opt/torch/.venv/bin/python3 \\
    perf/anchors/nccl_perf.py allreduce -b 8 -e 256M -f 4 --hostid-prefix braidhost

Collectives: allreduce (all_reduce), allgather (all_gather_into_tensor),
reducescatter (reduce_scatter_tensor), alltoall (all_to_all_single),
broadcast, gather and scatter (root 0; gather and scatter on lists of views of
one tensor, torch's only form of them). The title line names the NCCL version,
the GPU and the NCCL settings; rows carry the CUDA events' time after #wrong.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_perf  # noqa: E402

if __name__ == "__main__":
    sys.exit(torch_perf.main(sys.argv[1:], "nccl", __doc__.split("\n\n")[0]))
