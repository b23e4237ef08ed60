"""braid as a torch.distributed backend.

    import braid_torch            # registers the "braid" backend
    torch.distributed.init_process_group("braid", ...)

Every collective torch.distributed has (all_reduce, broadcast, reduce,
all_gather and all_gather_into_tensor, reduce_scatter and
reduce_scatter_tensor, all_to_all and all_to_all_single with splits, gather,
scatter, send / recv, barrier) runs on braid for CPU tensors, asynchronously
(async_op=True returns a work whose future completes when braid is done), so
DistributedDataParallel and the rest of torch.distributed work on it. The
library is $BRAID_LIBRARY or libbraid.so.0 (see _lib.py); braid's own
variables (BRAID_TRANSPORT, BRAID_TIMEOUT_MS, ...) apply as in C.
"""
import torch.distributed as dist

from ._lib import BraidError, library
from .process_group import BraidProcessGroup

__all__ = ["BraidError", "BraidProcessGroup", "library"]


def _create(store, rank, size, timeout):
    return BraidProcessGroup(store, rank, size, timeout)


if not hasattr(dist.Backend, "BRAID"):
    dist.Backend.register_backend("braid", _create)
