"""Completion of the backend's asynchronous ops.

Every op of a process group is queued on the group's one braid stream and
returns a BraidWork at once. One thread per group (the Completer) waits for
the ops in the order they were queued, which is the order they finish: it
waits on each op's braid event with the GIL released, runs the op's finishing
step (copies out of a staging tensor, for the list forms), and completes the
op's future. So futures complete whether or not anyone calls wait(), as DDP's
reducer needs, and wait() only waits for that thread to reach the op.
"""
import queue
import threading

import torch
import torch.distributed as dist

from . import _lib


class BraidWork(dist._Work):
    """One queued op: its braid event, the tensors it must keep alive, what
    runs once it is done, and its result (the output tensors)."""

    def __init__(self, event, keep, result, finish=None):
        super().__init__()
        self.event = event
        self.keep = keep  # tensors braid reads or writes until the op is over
        self.result = result
        self.finish = finish
        self.error = None
        self.done = threading.Event()
        self.future = torch.futures.Future()

    def wait(self, timeout=None):  # noqa: ARG002 (braid's own deadlines apply: BRAID_TIMEOUT_MS)
        self.done.wait()
        if self.error is not None:
            raise self.error
        return True

    def is_completed(self):
        return self.done.is_set()

    def is_success(self):
        return self.done.is_set() and self.error is None

    def exception(self):
        return self.error

    def get_future(self):
        return self.future

    def result_tensors(self):
        return self.result


class Completer:
    """The thread that completes a group's works in queue order."""

    def __init__(self, lib, comm):
        self._lib = lib
        self._comm = comm
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="braid-torch-completer", daemon=True)
        self._thread.start()

    def submit(self, work):
        self._queue.put(work)

    def close(self):
        """Completes what is queued, then stops the thread."""
        self._queue.put(None)
        self._thread.join()

    def _run(self):
        failed = None  # after one failure every later op fails too: the communicator is broken
        while True:
            work = self._queue.get()
            if work is None:
                return
            error = failed or self._wait(work)
            if error is None and work.finish is not None:
                try:
                    work.finish()
                except Exception as e:  # noqa: BLE001 (handed to the waiter)
                    error = e
            self._lib.raw("braidEventDestroy", work.event)
            work.keep = None
            work.error = error
            failed = failed or (error if isinstance(error, _lib.BraidError) else None)
            work.done.set()  # before the future: its callbacks may ask is_completed()
            if error is None:
                work.future.set_result(work.result)
            else:
                work.future.set_exception(error)

    def _wait(self, work):
        code = self._lib.raw("braidEventSynchronize", work.event)
        if code == _lib.SUCCESS:
            status = _lib.ctypes.c_int(0)
            self._lib.raw("braidCommGetAsyncError", self._comm, _lib.ctypes.byref(status))
            code = status.value
        if code == _lib.SUCCESS:
            return None
        return _lib.BraidError("braid op", code, self._lib.last_error(self._comm, code))
