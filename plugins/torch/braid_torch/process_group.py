"""BraidProcessGroup: torch.distributed's collectives on braid, for CPU tensors.

Each group is one braid communicator with one braid stream. Every op is
queued on that stream and returns a BraidWork at once (work.py), so
communication overlaps the caller's computation as with torch's own
backends; ops on one group run in the order they were called, which torch
requires to be the same on every rank. Ranks find each other through the
store torch gives the backend: rank 0 makes the braid unique id and puts it
there, the others read it.

What is not supported says so: tensors off the CPU, non-contiguous tensors,
dtypes braid has no equivalent of (complex, bool except for MIN / MAX),
bitwise ops and PREMUL_SUM (torch 1.13 keeps its scalar out of Python's
reach), recv from any source.
"""
import atexit
import collections
import ctypes
import threading
import weakref
from datetime import timedelta

import torch
import torch.distributed as dist

from . import _lib
from .work import BraidWork, Completer, GroupContext

_DTYPES = {
    torch.int8: _lib.INT8,
    torch.uint8: _lib.UINT8,
    torch.int32: _lib.INT32,
    torch.int64: _lib.INT64,
    torch.float16: _lib.FLOAT16,
    torch.float32: _lib.FLOAT32,
    torch.float64: _lib.FLOAT64,
    torch.bfloat16: _lib.BFLOAT16,
}

_OPS = {
    dist.ReduceOp.SUM: _lib.SUM,
    dist.ReduceOp.PRODUCT: _lib.PROD,
    dist.ReduceOp.MIN: _lib.MIN,
    dist.ReduceOp.MAX: _lib.MAX,
    dist.ReduceOp.AVG: _lib.AVG,
}

_UNIQUE_ID_KEY = "braid_torch/unique_id"


def _op_name(op):
    for name in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM"):
        try:
            if op == getattr(dist.ReduceOp, name):
                return name
        except (AttributeError, TypeError):
            continue
    return repr(op)


class BraidProcessGroup(dist.ProcessGroup):
    def __init__(self, store, rank, size, timeout=timedelta(minutes=30)):
        super().__init__(rank, size)
        self._lib = _lib.library()
        uid = _lib.UniqueId()
        if rank == 0:
            self._lib.call("braidGetUniqueId", ctypes.byref(uid))
            store.set(_UNIQUE_ID_KEY, bytes(uid))
        else:
            store.wait([_UNIQUE_ID_KEY], timeout)
            ctypes.memmove(ctypes.addressof(uid), store.get(_UNIQUE_ID_KEY), _lib.UNIQUE_ID_BYTES)
        self._comm = ctypes.c_void_p()
        self._lib.call("braidCommInitRank", ctypes.byref(self._comm), size, uid, rank)
        self._stream = ctypes.c_void_p()
        self._lib.call("braidStreamCreate", ctypes.byref(self._stream), comm=self._comm)
        self._completer = Completer()
        self._context = GroupContext(self._lib, self._comm, self._completer)
        # Point-to-point ops held back and issued together as one braid group
        # (see send / recv), with their works; the lock makes one issuer.
        self._p2p, self._p2p_lock = [], threading.RLock()
        self._context.flush = self._flush_p2p
        # Works not yet completed, oldest first: the group holds them (and so
        # the tensors braid uses) even when the caller drops them.
        self._pending = collections.deque()
        # torch drops a group without telling its backend: free braid's side
        # when the group is collected, or at the latest when Python exits.
        # (The context's flush refers to the group, so that happens at exit.)
        self._finalizer = weakref.finalize(self, BraidProcessGroup._release, self._lib, self._context,
                                           self._pending, self._stream, self._comm)
        atexit.register(self._finalizer)

    def getBackendName(self):  # noqa: N802 (torch's name)
        return "braid"

    def shutdown(self):
        """Completes the queued ops, then frees the stream and the communicator."""
        self._finalizer()

    @staticmethod
    def _release(lib, context, pending, stream, comm):
        context.flush()  # held-back sends and receives still go
        for work in pending:
            work.complete()
        pending.clear()
        context.completer.close()
        lib.raw("braidStreamDestroy", stream)
        lib.raw("braidCommDestroy", comm)

    # ---- plumbing ---------------------------------------------------------

    def _call(self, name, *args):
        if self._p2p:  # held-back sends and receives go first: calls keep their order
            self._flush_p2p()
        self._lib.call(name, *args, comm=self._comm)

    def _queue(self, keep, result, finish=None):
        """A work for everything queued so far on the stream."""
        event = ctypes.c_void_p()
        self._call("braidEventCreate", ctypes.byref(event))
        self._call("braidEventRecord", event, self._stream)
        work = BraidWork(self._context, event, keep, result, finish)
        while self._pending and self._pending[0].is_completed():
            self._pending.popleft()
        self._pending.append(work)
        return work

    def _dtype(self, tensor, op=None):
        if tensor.device.type != "cpu":
            raise ValueError(f"braid_torch: tensors on {tensor.device} are not supported in this version "
                             "(CPU tensors only)")
        if not tensor.is_contiguous():
            raise ValueError("braid_torch: tensors must be contiguous")
        if tensor.dtype == torch.bool and op in (_lib.MIN, _lib.MAX):
            return _lib.UINT8  # logical and / or
        if tensor.dtype not in _DTYPES:
            raise ValueError(f"braid_torch: dtype {tensor.dtype} is not supported" +
                             (" (bool only with MIN / MAX)" if tensor.dtype == torch.bool else ""))
        return _DTYPES[tensor.dtype]

    def _op(self, reduce_op):
        for torch_op, braid_op in _OPS.items():
            if reduce_op == torch_op:
                return braid_op
        raise ValueError(f"braid_torch: ReduceOp {_op_name(reduce_op)} is not supported "
                         "(SUM, PRODUCT, MIN, MAX, AVG are)")

    def _check_rank(self, what, r):
        if not 0 <= r < self.size():
            raise ValueError(f"braid_torch: {what} {r} is outside [0, {self.size()})")

    @staticmethod
    def _ptr(tensor):
        return ctypes.c_void_p(tensor.data_ptr())

    # ---- collectives ------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        op = self._op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        dtypes = [self._dtype(t, op) for t in tensors]  # all checked before any is queued
        for t, dtype in zip(tensors, dtypes):
            self._call("braidAllReduce", self._ptr(t), self._ptr(t), t.numel(), dtype, op, self._comm,
                       self._stream)
        return self._queue(tensors, tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        op = self._op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        dtypes = [self._dtype(t, op) for t in tensors]
        self._call("braidGroupStart")
        try:
            for t, dtype in zip(tensors, dtypes):
                self._call("braidAllReduce", self._ptr(t), self._ptr(t), t.numel(), dtype, op, self._comm,
                           self._stream)
        finally:
            self._call("braidGroupEnd")
        return self._queue(tensors, tensors)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._check_rank("root", root)
        dtypes = [self._dtype(t) for t in tensors]
        for t, dtype in zip(tensors, dtypes):
            self._call("braidBroadcast", self._ptr(t), self._ptr(t), t.numel(), dtype, root, self._comm,
                       self._stream)
        return self._queue(tensors, tensors)

    def reduce(self, tensors, opts=None):
        op = self._op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        root = opts.rootRank if opts is not None else 0
        self._check_rank("root", root)
        dtypes = [self._dtype(t, op) for t in tensors]
        for t, dtype in zip(tensors, dtypes):
            self._call("braidReduce", self._ptr(t), self._ptr(t), t.numel(), dtype, op, root, self._comm,
                       self._stream)
        return self._queue(tensors, tensors)

    def _allgather_base(self, output, input, opts=None):  # noqa: A002 (torch's names)
        return self._allgather_into(output, input, [output], [])

    # keep / result: what the work holds besides the buffers, and hands its future.
    def _allgather_into(self, output, input, result, keep):  # noqa: A002
        dtype = self._dtype(input)
        if self._dtype(output) != dtype or output.numel() != input.numel() * self.size():
            raise ValueError(f"braid_torch: all_gather_into_tensor needs an output of {self.size()} x "
                             f"{input.numel()} elements of {input.dtype}, got {output.numel()} of {output.dtype}")
        self._call("braidAllGather", self._ptr(input), self._ptr(output), input.numel(), dtype, self._comm,
                   self._stream)
        return self._queue([output, input] + keep, result)

    def allgather(self, output_lists, inputs, opts=None):
        if len(inputs) != 1 or len(output_lists) != 1 or len(output_lists[0]) != self.size():
            raise ValueError(f"braid_torch: all_gather takes one input and a list of {self.size()} outputs")
        outputs, input = output_lists[0], inputs[0]  # noqa: A001
        for o in outputs:
            if o.numel() != input.numel() or o.dtype != input.dtype:
                raise ValueError("braid_torch: every all_gather output must have the input's shape and dtype")
        whole = self._spanned(outputs)
        if whole is not None:  # the outputs are the blocks of one tensor, in order: gather into it
            return self._allgather_into(whole, input, output_lists, [])
        staging = torch.empty(self.size() * input.numel(), dtype=input.dtype)

        def scatter_out():
            for o, block in zip(outputs, staging.chunk(self.size())):
                o.copy_(block.view_as(o))

        self._allgather_into(staging, input, None, [])  # its work completes with the one below
        return self._queue([staging, input], output_lists, scatter_out)

    @staticmethod
    def _spanned(blocks):
        """The contiguous tensor whose consecutive blocks `blocks` are, if any
        (e.g. the views of tensor.chunk(n)); None otherwise."""
        base = blocks[0]._base
        if base is None or not base.is_contiguous() or base.dtype != blocks[0].dtype:
            return None
        step = blocks[0].numel() * blocks[0].element_size()
        start = base.data_ptr()
        if base.numel() != blocks[0].numel() * len(blocks):
            return None
        for i, b in enumerate(blocks):
            if b._base is not base or not b.is_contiguous() or b.data_ptr() != start + i * step:
                return None
        return base.view(-1)

    def _reduce_scatter_base(self, output, input, opts=None):  # noqa: A002
        return self._reduce_scatter_into(output, input, opts, [])

    def _reduce_scatter_into(self, output, input, opts, keep):  # noqa: A002
        op = self._op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        dtype = self._dtype(input, op)
        if self._dtype(output, op) != dtype or input.numel() != output.numel() * self.size():
            raise ValueError(f"braid_torch: reduce_scatter_tensor needs an input of {self.size()} x "
                             f"{output.numel()} elements of {output.dtype}, got {input.numel()} of {input.dtype}")
        self._call("braidReduceScatter", self._ptr(input), self._ptr(output), output.numel(), dtype, op,
                   self._comm, self._stream)
        return self._queue([output, input] + keep, [output])

    def reduce_scatter(self, outputs, input_lists, opts=None):
        if len(outputs) != 1 or len(input_lists) != 1 or len(input_lists[0]) != self.size():
            raise ValueError(f"braid_torch: reduce_scatter takes one output and a list of {self.size()} inputs")
        staging = torch.cat([t.reshape(-1) for t in input_lists[0]])
        return self._reduce_scatter_into(outputs[0], staging, opts, [staging])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):  # noqa: A002
        n = self.size()
        dtype = self._dtype(input)
        if self._dtype(output) != dtype:
            raise ValueError("braid_torch: all_to_all_single needs input and output of one dtype")
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % n or output.numel() != input.numel():
                raise ValueError(f"braid_torch: all_to_all_single without splits needs {n} equal blocks "
                                 "in and out")
            self._call("braidAllToAll", self._ptr(input), self._ptr(output), input.numel() // n, dtype,
                       self._comm, self._stream)
            return self._queue([output, input], [output])
        send_counts = self._split_counts("input", input, input_split_sizes)
        recv_counts = self._split_counts("output", output, output_split_sizes)
        send_displs = [sum(send_counts[:p]) for p in range(n)]
        recv_displs = [sum(recv_counts[:p]) for p in range(n)]
        arrays = [_lib.sizes(v) for v in (send_counts, send_displs, recv_counts, recv_displs)]
        self._call("braidAllToAllv", self._ptr(input), arrays[0], arrays[1], self._ptr(output), arrays[2],
                   arrays[3], dtype, self._comm, self._stream)
        return self._queue([output, input], [output])

    def _split_counts(self, which, tensor, splits):
        """Elements per peer: splits are rows of dim 0 (none: equal blocks)."""
        n = self.size()
        rows = tensor.shape[0] if tensor.dim() > 0 else 1
        per_row = tensor.numel() // rows if rows else 0
        if not splits:
            if rows % n:
                raise ValueError(f"braid_torch: {which} of {rows} rows does not split into {n} equal blocks")
            splits = [rows // n] * n
        if len(splits) != n or sum(splits) != rows or min(splits) < 0:
            raise ValueError(f"braid_torch: {which}_split_sizes {list(splits)} must be {n} counts summing to "
                             f"the {rows} rows")
        return [s * per_row for s in splits]

    def alltoall(self, outputs, inputs, opts=None):
        n = self.size()
        if len(outputs) != n or len(inputs) != n:
            raise ValueError(f"braid_torch: all_to_all takes {n} inputs and {n} outputs")
        dtypes = [self._dtype(t) for t in inputs] + [self._dtype(t) for t in outputs]
        self._call("braidGroupStart")
        try:
            for p in range(n):
                self._call("braidSend", self._ptr(inputs[p]), inputs[p].numel(), dtypes[p], p, self._comm,
                           self._stream)
                self._call("braidRecv", self._ptr(outputs[p]), outputs[p].numel(), dtypes[n + p], p, self._comm,
                           self._stream)
        finally:
            self._call("braidGroupEnd")
        return self._queue(outputs + inputs, outputs)

    def gather(self, output_lists, inputs, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._check_rank("root", root)
        input = inputs[0]  # noqa: A001
        dtype = self._dtype(input)
        if self.rank() != root:  # nothing lands here: braid takes a NULL output
            self._call("braidGather", self._ptr(input), None, input.numel(), dtype, root, self._comm, self._stream)
            return self._queue([input], output_lists)
        outputs = output_lists[0]
        if len(outputs) != self.size():
            raise ValueError(f"braid_torch: gather needs {self.size()} outputs on the root")
        for o in outputs:
            if o.numel() != input.numel() or o.dtype != input.dtype:
                raise ValueError("braid_torch: every gather output must have the input's shape and dtype")
        whole = self._spanned(outputs)
        if whole is not None:  # the outputs are the blocks of one tensor, in order: gather into it
            self._call("braidGather", self._ptr(input), self._ptr(whole), input.numel(), dtype, root, self._comm,
                       self._stream)
            return self._queue([whole, input], output_lists)
        staging = torch.empty(self.size() * input.numel(), dtype=input.dtype)

        def scatter_out():
            for o, block in zip(outputs, staging.chunk(self.size())):
                o.copy_(block.view_as(o))

        self._call("braidGather", self._ptr(input), self._ptr(staging), input.numel(), dtype, root, self._comm,
                   self._stream)
        return self._queue([staging, input], output_lists, scatter_out)

    def scatter(self, outputs, input_lists, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._check_rank("root", root)
        output = outputs[0]
        dtype = self._dtype(output)
        if self.rank() != root:  # nothing is read here: braid takes a NULL input
            self._call("braidScatter", None, self._ptr(output), output.numel(), dtype, root, self._comm,
                       self._stream)
            return self._queue([output], outputs)
        inputs = input_lists[0]
        if len(inputs) != self.size():
            raise ValueError(f"braid_torch: scatter needs {self.size()} inputs on the root")
        for t in inputs:
            if t.numel() != output.numel() or t.dtype != output.dtype:
                raise ValueError("braid_torch: every scatter input must have the output's shape and dtype")
        # Blocks of one tensor, in order, are sent from where they are; others
        # are copied together now (torch's inputs must not change until the
        # work completes, so copying them early reads what the call would).
        whole = self._spanned(inputs)
        if whole is None:
            whole = torch.cat([t.reshape(-1) for t in inputs])
        self._call("braidScatter", self._ptr(whole), self._ptr(output), output.numel(), dtype, root, self._comm,
                   self._stream)
        return self._queue([whole, output] + list(inputs), outputs)

    # Point to point. isend / irecv are held back and issued together, as one
    # braid group, when something needs them: a wait or poll on one of their
    # works, or the group's next other op. So batch_isend_irecv's exchange
    # (every rank sends, then receives) progresses both ways at once instead
    # of each rank's send waiting for a receive queued behind it. braid
    # matches a pair's sends and receives in order: tags are not compared.
    def send(self, tensors, dst, tag=0):
        self._check_rank("dst", dst)
        return self._hold_p2p(True, tensors, dst)

    def recv(self, tensors, src, tag=0):
        self._check_rank("src", src)
        return self._hold_p2p(False, tensors, src)

    def _hold_p2p(self, is_send, tensors, peer):
        dtypes = [self._dtype(t) for t in tensors]
        work = BraidWork(self._context, None, tensors, tensors)
        with self._p2p_lock:
            self._p2p.append((is_send, tensors, dtypes, peer, work))
        return work

    def _flush_p2p(self):
        with self._p2p_lock:
            batch, self._p2p = self._p2p, []
            if not batch:
                return
            try:
                self._lib.call("braidGroupStart")
                try:
                    for is_send, tensors, dtypes, peer, _ in batch:
                        for t, dtype in zip(tensors, dtypes):
                            self._lib.call("braidSend" if is_send else "braidRecv", self._ptr(t), t.numel(), dtype,
                                           peer, self._comm, self._stream, comm=self._comm)
                finally:
                    self._lib.call("braidGroupEnd", comm=self._comm)
            except _lib.BraidError as e:
                for *_, work in batch:
                    work.issued(None, e)
                return
            for *_, work in batch:
                event = ctypes.c_void_p()
                self._lib.call("braidEventCreate", ctypes.byref(event), comm=self._comm)
                self._lib.call("braidEventRecord", event, self._stream, comm=self._comm)
                work.issued(event)
                while self._pending and self._pending[0].is_completed():
                    self._pending.popleft()
                self._pending.append(work)

    def recv_anysource(self, tensors, tag=0):
        raise ValueError("braid_torch: recv from any source is not supported (braid matches per peer)")

    def barrier(self, opts=None):
        self._call("braidBarrier", self._comm, self._stream)
        return self._queue([], [])
