"""Completion of the backend's asynchronous ops.

Every op of a process group is queued on the group's one braid stream and
returns a BraidWork at once. A work completes once: braid's event for it is
reached, its finishing step (copies out of a staging tensor, for the list
forms) has run, and its future, if anyone asked for one, holds the result.
Whoever gets there first completes it:
  - wait() on the caller's thread (torch's synchronous calls do only this:
    no other thread is woken, which keeps a small call's cost down);
  - the group's completer thread, for works whose future was asked for
    (get_future(), as DDP's reducer does): futures then complete whether or
    not anyone waits, in the order the ops were queued (the order they end).
Waiting on braid's event happens with the GIL released (ctypes drops it).
"""
import queue
import threading

import torch
import torch.distributed as dist

from . import _lib


class GroupContext:
    """What a group's works share: the library, the communicator, the
    completer, and flush(), which issues the point-to-point ops the group
    holds back (process_group.py) so that a work of one can be waited on."""

    def __init__(self, lib, comm, completer):
        self.lib, self.comm, self.completer = lib, comm, completer
        self.flush = lambda: None


class BraidWork(dist._Work):
    """One queued op: its braid event, the tensors it must keep alive, what
    runs once it is done, and its result (the output tensors). A held-back
    point-to-point op has no event until its batch is issued (issued())."""

    def __init__(self, group, event, keep, result, finish=None):
        super().__init__()
        self._group = group  # a GroupContext
        self._event = event
        self._keep = keep  # tensors braid reads or writes until the op is over
        self._result = result
        self._finish = finish
        self._lock = threading.Lock()
        self._done = False
        self._error = None
        self._future = None

    def issued(self, event, error=None):
        """The op went to braid (event: the point after it), or could not (error)."""
        with self._lock:
            self._event = event
            if error is not None:
                self._finish_locked(error)

    def complete(self):
        """Waits for the op and completes the work (once; later calls return at once)."""
        if self._event is None:
            self._group.flush()
        with self._lock:
            if not self._done:
                self._complete_locked(self._group.lib.raw("braidEventSynchronize", self._event))

    def _complete_locked(self, code):
        lib, comm = self._group.lib, self._group.comm
        if code == _lib.SUCCESS:
            status = _lib.ctypes.c_int(0)
            lib.raw("braidCommGetAsyncError", comm, _lib.ctypes.byref(status))
            code = status.value  # an op that failed leaves the communicator failed
        error = None if code == _lib.SUCCESS else _lib.BraidError("braid op", code, lib.last_error(comm, code))
        if error is None and self._finish is not None:
            try:
                self._finish()
            except Exception as e:  # noqa: BLE001 (handed to the waiter)
                error = e
        lib.raw("braidEventDestroy", self._event)
        self._finish_locked(error)

    def _finish_locked(self, error):
        self._keep = self._finish = None
        self._error = error
        self._done = True  # before the future: its callbacks may ask is_completed()
        if self._future is not None:
            if error is None:
                self._future.set_result(self._result)
            else:
                self._future.set_exception(error)

    def wait(self, timeout=None):  # noqa: ARG002 (braid's own deadlines apply: BRAID_TIMEOUT_MS)
        self.complete()
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        if self._event is None:
            self._group.flush()  # polling must make progress too
        with self._lock:
            if not self._done and self._group.lib.raw("braidEventQuery", self._event) == _lib.SUCCESS:
                self._complete_locked(_lib.SUCCESS)
            return self._done

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def get_future(self):
        with self._lock:
            if self._future is None:
                self._future = torch.futures.Future()
                if self._done:
                    if self._error is None:
                        self._future.set_result(self._result)
                    else:
                        self._future.set_exception(self._error)
                else:
                    self._group.completer.submit(self)
            return self._future

    def result_tensors(self):
        return self._result


class Completer:
    """The thread that completes the works whose future was asked for."""

    def __init__(self):
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="braid-torch-completer", daemon=True)
        self._thread.start()

    def submit(self, work):
        self._queue.put(work)

    def close(self):
        """Completes what was submitted, then stops the thread."""
        self._queue.put(None)
        self._thread.join()

    def _run(self):
        while True:
            work = self._queue.get()
            if work is None:
                return
            work.complete()
