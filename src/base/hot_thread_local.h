// Thread-locals read on every call. libbraid is a shared library, so a plain
// thread_local costs a __tls_get_addr call per access; initial-exec TLS is
// one load off the thread pointer. Only for a few small, trivially
// constructed values: they take bytes of the static TLS block, of which glibc
// keeps a reserve for libraries loaded with dlopen (Python, NCCL plugins).
#pragma once

#define BRAID_HOT_THREAD_LOCAL thread_local __attribute__((tls_model("initial-exec")))
