"""libbraid.so through ctypes: the C API's types and the entry points the
backend calls, each checked so that a braid error becomes a Python exception
carrying braidGetLastError's message.

Which library: $BRAID_LIBRARY when set (a path), else libbraid.so.0 as the
dynamic loader finds it (LD_LIBRARY_PATH, an installed braid). ctypes drops
the GIL around every foreign call, so a rank's Python threads keep running
while one of them waits inside braid.
"""
import ctypes
import os

# braidResult_t
SUCCESS = 0

# braidDataType_t
INT8, UINT8, INT32, UINT32, INT64, UINT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16 = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)

# braidRedOp_t
SUM, PROD, MAX, MIN, AVG = range(5)

UNIQUE_ID_BYTES = 128


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]


class BraidError(RuntimeError):
    """A braid call failed; the message is braid's own (braidGetLastError)."""

    def __init__(self, call, code, message):
        super().__init__(f"{call}: {message} [braid result {code}]")
        self.code = code


_c = ctypes.c_void_p
_size = ctypes.c_size_t
_int = ctypes.c_int
_sizes = ctypes.POINTER(ctypes.c_size_t)

# name: argument types. Every entry returns braidResult_t (an int).
_SIGNATURES = {
    "braidGetUniqueId": [ctypes.POINTER(UniqueId)],
    "braidCommInitRank": [ctypes.POINTER(_c), _int, UniqueId, _int],
    "braidCommDestroy": [_c],
    "braidCommAbort": [_c],
    "braidCommGetAsyncError": [_c, ctypes.POINTER(_int)],
    "braidAllReduce": [_c, _c, _size, _int, _int, _c, _c],
    "braidBroadcast": [_c, _c, _size, _int, _int, _c, _c],
    "braidReduce": [_c, _c, _size, _int, _int, _int, _c, _c],
    "braidAllGather": [_c, _c, _size, _int, _c, _c],
    "braidReduceScatter": [_c, _c, _size, _int, _int, _c, _c],
    "braidAllToAll": [_c, _c, _size, _int, _c, _c],
    "braidGather": [_c, _c, _size, _int, _int, _c, _c],
    "braidScatter": [_c, _c, _size, _int, _int, _c, _c],
    "braidAllToAllv": [_c, _sizes, _sizes, _c, _sizes, _sizes, _int, _c, _c],
    "braidSend": [_c, _size, _int, _int, _c, _c],
    "braidRecv": [_c, _size, _int, _int, _c, _c],
    "braidBarrier": [_c, _c],
    "braidGroupStart": [],
    "braidGroupEnd": [],
    "braidStreamCreate": [ctypes.POINTER(_c)],
    "braidStreamDestroy": [_c],
    "braidEventCreate": [ctypes.POINTER(_c)],
    "braidEventRecord": [_c, _c],
    "braidEventQuery": [_c],
    "braidEventSynchronize": [_c],
    "braidEventDestroy": [_c],
}


class Library:
    """The loaded library: call("braidAllReduce", ...) raises BraidError on failure."""

    def __init__(self, path=None):
        path = path or os.environ.get("BRAID_LIBRARY") or "libbraid.so.0"
        try:
            self._dll = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError(f"braid_torch: cannot load {path} ({e}); set BRAID_LIBRARY to libbraid.so's path "
                               "or put its directory on LD_LIBRARY_PATH") from None
        for name, args in _SIGNATURES.items():
            fn = getattr(self._dll, name)
            fn.argtypes = args
            fn.restype = _int
        self._dll.braidGetLastError.argtypes = [_c]
        self._dll.braidGetLastError.restype = ctypes.c_char_p
        self._dll.braidGetErrorString.argtypes = [_int]
        self._dll.braidGetErrorString.restype = ctypes.c_char_p

    def raw(self, name, *args):
        """The call's braidResult_t, unchecked (for queries that return InProgress)."""
        return getattr(self._dll, name)(*args)

    def call(self, name, *args, comm=None):
        code = getattr(self._dll, name)(*args)
        if code != SUCCESS:
            raise BraidError(name, code, self.last_error(comm, code))
        return code

    def last_error(self, comm, code):
        message = self._dll.braidGetLastError(comm)
        if message:
            return message.decode(errors="replace")
        return self._dll.braidGetErrorString(code).decode(errors="replace")


_library = None


def library():
    """The process's one Library, loaded on first use."""
    global _library
    if _library is None:
        _library = Library()
    return _library


def sizes(values):
    """A size_t[] of the values."""
    return (ctypes.c_size_t * len(values))(*values)
