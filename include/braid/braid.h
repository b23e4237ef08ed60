/*
 * braid: collective communication for CPUs and GPUs over TCP, shared memory,
 * verbs and UCX. The whole public C API lives in this header.
 *
 * Shape: NCCL users should feel at home. Every function returns a
 * braidResult_t; on any error nothing has been sent and no user buffer has been
 * touched, and braidGetLastError(comm) (or braidGetLastError(NULL) for errors
 * not tied to a communicator) returns a message that names the argument or the
 * peer at fault.
 *
 * Threading: a communicator may be used from several threads, but the order in
 * which collectives are issued on one communicator must be the same on every
 * rank (as with NCCL). braidCommAbort may be called from any thread at any time.
 *
 * Streams: a NULL braidStream_t runs the operation inline on the calling
 * thread and returns when it is complete. A stream made by braidStreamCreate
 * is an in-order queue: the call validates its arguments, enqueues, and
 * returns; the buffers must stay valid and untouched until the stream (or an
 * event recorded after the op) reports completion. Like a CUDA launch queue,
 * it holds a bounded number of ops (1024): a call that finds it full waits
 * until half of them have run, but only while they run; when the stream's
 * worker has finished nothing for 5 ms (an op waiting for a peer, say), the
 * call enqueues beyond the bound and returns.
 *
 * Compiles as C99 and as C++.
 */
#ifndef BRAID_BRAID_H_
#define BRAID_BRAID_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BRAID_API __attribute__((visibility("default")))
#else
#define BRAID_API
#endif

/* The enums' underlying type: int under C++ too. Without a fixed type a C++
 * enum may only hold the values its enumerators' bit width covers, so an
 * out-of-range value a C caller passes (which braid rejects as
 * braidInvalidArgument) would be undefined behaviour to even load. In C an
 * enum is an int-sized integer already; the macro expands to nothing there. */
#ifdef __cplusplus
#define BRAID_ENUM_INT : int
#else
#define BRAID_ENUM_INT
#endif

#define BRAID_MAJOR 0
#define BRAID_MINOR 1
#define BRAID_PATCH 0
/* Encoded as MAJOR*10000 + MINOR*100 + PATCH, as NCCL does. */
#define BRAID_VERSION_CODE (BRAID_MAJOR * 10000 + BRAID_MINOR * 100 + BRAID_PATCH)

typedef enum BRAID_ENUM_INT {
  braidSuccess = 0,
  braidUnhandledCudaError = 1,
  braidSystemError = 2,     /* a system call failed (errno is in the message) */
  braidInternalError = 3,   /* a bug in braid: please report it */
  braidInvalidArgument = 4, /* an argument is wrong: the message names it */
  braidInvalidUsage = 5,    /* the call is not allowed in this state */
  braidRemoteError = 6,     /* a peer failed or broke the protocol */
  braidInProgress = 7,      /* the operation has not completed yet */
  braidTimeout = 8,         /* a deadline (BRAID_TIMEOUT_MS) passed */
  braidAborted = 9,         /* the communicator was aborted */
  braidNotSupported = 10,   /* not built in this version or configuration */
  braidNumResults = 11
} braidResult_t;

/* NCCL's order and numbering. */
typedef enum BRAID_ENUM_INT {
  braidInt8 = 0,
  braidChar = 0,
  braidUint8 = 1,
  braidInt32 = 2,
  braidInt = 2,
  braidUint32 = 3,
  braidInt64 = 4,
  braidUint64 = 5,
  braidFloat16 = 6,
  braidHalf = 6,
  braidFloat32 = 7,
  braidFloat = 7,
  braidFloat64 = 8,
  braidDouble = 8,
  braidBfloat16 = 9,
  braidFloat8e4m3 = 10,
  braidFloat8e5m2 = 11,
  braidNumTypes = 12
} braidDataType_t;

/* Avg divides once, at the end, by the number of ranks (integer division for
 * integer types). Low-precision floats are reduced through fp32 and rounded
 * back to nearest-even after each step. PreMulSum ops come from
 * braidRedOpCreatePreMulSum (below) and take values from braidNumOps up. */
typedef enum BRAID_ENUM_INT {
  braidSum = 0,
  braidProd = 1,
  braidMax = 2,
  braidMin = 3,
  braidAvg = 4,
  braidNumOps = 5
} braidRedOp_t;

#define BRAID_UNIQUE_ID_BYTES 128
/* Opaque to users: the root's address and a random 128-bit secret. Anyone who
 * holds it can join the communicator, so pass it only to your own ranks. */
typedef struct {
  char internal[BRAID_UNIQUE_ID_BYTES];
} braidUniqueId;

typedef struct braidComm* braidComm_t;
typedef struct braidStream* braidStream_t;
typedef struct braidEvent* braidEvent_t;

/* Versioned configuration. Always start from BRAID_CONFIG_INITIALIZER so that
 * fields added later get their defaults. */
#define BRAID_CONFIG_MAGIC 0x62726364u /* "brcd" */
#define BRAID_CONFIG_VERSION 1
typedef struct {
  size_t size;          /* sizeof(braidConfig_t), set by the initializer */
  unsigned int magic;   /* BRAID_CONFIG_MAGIC */
  unsigned int version; /* BRAID_CONFIG_VERSION */
  int timeoutMs;        /* deadline for init and every wait; <0: BRAID_TIMEOUT_MS or default */
  int nSocks;           /* TCP sockets per peer connection; <=0: BRAID_NSOCKS, else 1 on-host / 2 off-host */
  const char* socketIfname; /* interface (prefix) for TCP; NULL: BRAID_SOCKET_IFNAME or auto */
} braidConfig_t;

#define BRAID_CONFIG_INITIALIZER \
  { sizeof(braidConfig_t), BRAID_CONFIG_MAGIC, BRAID_CONFIG_VERSION, -1, -1, NULL }

/* ---- Version and errors ------------------------------------------------ */

/* *version = BRAID_VERSION_CODE of the library actually loaded. */
BRAID_API braidResult_t braidGetVersion(int* version);
/* A static string naming the result code; never NULL. */
BRAID_API const char* braidGetErrorString(braidResult_t result);
/* The message of the last error on this communicator (comm == NULL: the last
 * error of this thread that was not tied to a communicator, e.g. during init).
 * Valid until the next call on the same communicator / thread. Never NULL. */
BRAID_API const char* braidGetLastError(braidComm_t comm);

/* ---- Communicator lifecycle --------------------------------------------- */

/* Called once, by one process (usually rank 0), which must then also join as a
 * rank of the communicator: it starts the root listener of the rendezvous on
 * this process and fills *uniqueId with its address and a fresh secret. The
 * address is chosen like TCP's: BRAID_SOCKET_IFNAME, else the first non-loopback
 * interface that is up, else loopback. */
BRAID_API braidResult_t braidGetUniqueId(braidUniqueId* uniqueId);

/* Collective over nranks processes holding the same uniqueId; blocks until every
 * rank has arrived or the deadline passes (braidTimeout, the message names the
 * ranks that never arrived). */
BRAID_API braidResult_t braidCommInitRank(braidComm_t* comm, int nranks, braidUniqueId uniqueId,
                                          int rank);
BRAID_API braidResult_t braidCommInitRankConfig(braidComm_t* comm, int nranks,
                                                braidUniqueId uniqueId, int rank,
                                                braidConfig_t* config);
/* Reads rank, size and rendezvous address from the environment of the common
 * launchers: BRAID_RANK/BRAID_WORLD_SIZE/BRAID_ROOT_ADDR, torchrun
 * (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Open MPI (OMPI_COMM_WORLD_RANK/
 * SIZE), PMI (PMI_RANK/PMI_SIZE) and SLURM (SLURM_PROCID/SLURM_NTASKS); where the
 * launcher gives no address, MASTER_ADDR/MASTER_PORT must be set. Rank 0 opens
 * the root at that address. The secret comes from BRAID_SECRET (32 hex digits)
 * when set, so that only processes given it can join; without it the address
 * alone admits a rank, which the log warns about. config may be NULL. */
BRAID_API braidResult_t braidCommInitFromEnv(braidComm_t* comm, braidConfig_t* config);
/* Collective over every rank of comm: ranks passing the same color form a new
 * communicator, ordered by key (then by rank in comm). color ==
 * BRAID_SPLIT_NOCOLOR: this rank joins none and *newcomm is set to NULL. */
#define BRAID_SPLIT_NOCOLOR (-1)
BRAID_API braidResult_t braidCommSplit(braidComm_t comm, int color, int key, braidComm_t* newcomm);
/* After a failure: every rank of comm that is not listed in excludeRanks calls
 * this (the excluded ones may be dead) and they form a new communicator of the
 * survivors, in comm's order. Works on a communicator in error state. */
BRAID_API braidResult_t braidCommShrink(braidComm_t comm, const int* excludeRanks, int count,
                                        braidComm_t* newcomm);
/* Completes every operation this rank queued on the communicator (on any
 * stream), then refuses new ones with braidInvalidUsage, so that what follows
 * is braidCommDestroy. Returns the first error the completed work hit, or
 * braidTimeout if it does not complete within the communicator's timeout.
 * Calling it again returns at once. As ncclCommFinalize (blocking). */
BRAID_API braidResult_t braidCommFinalize(braidComm_t comm);
/* Waits for this rank's outstanding work, then frees the communicator. */
BRAID_API braidResult_t braidCommDestroy(braidComm_t comm);
/* Stops every pending operation (they return braidAborted), tells the peers
 * and frees the communicator. Thread-safe with respect to other calls. */
BRAID_API braidResult_t braidCommAbort(braidComm_t comm);
/* Writes the communicator's flight recorder (the last BRAID_TRACE_BUFFER_SIZE
 * operations: sequence numbers, kind, sizes, algorithm, state, timestamps) as
 * JSON to `path`; NULL: braid-trace.<host>.<pid>.rank<r>.json in BRAID_TRACE_DIR
 * (or the current directory). Safe while operations run. */
BRAID_API braidResult_t braidCommDumpTrace(braidComm_t comm, const char* path);
/* Success, or the first error an asynchronous operation hit. Never blocks. */
BRAID_API braidResult_t braidCommGetAsyncError(braidComm_t comm, braidResult_t* asyncError);
/* Registers [buff, buff + size) with the communicator's transports that pin
 * memory for the network (ibverbs), so that messages of later calls inside
 * it go without a registration of their own; as ncclCommRegister. Over the
 * other transports (tcp, shm, ucx, netplugin) it records the range and pins
 * nothing.
 * The buffer must stay mapped until braidCommDeregister (or the
 * communicator's destruction); ranges may overlap. Local to this rank: the
 * others need not register alike. Thread-safe. */
BRAID_API braidResult_t braidCommRegister(const braidComm_t comm, void* buff, size_t size, void** handle);
/* Ends a registration; an operation still running over the buffer keeps it
 * until it completes. A handle this communicator did not make (or already
 * deregistered) is braidInvalidArgument. */
BRAID_API braidResult_t braidCommDeregister(const braidComm_t comm, void* handle);
/* Host memory that the other processes of this host may map: pages of one
 * memfd per process (one descriptor however many allocations, closed when
 * the last is freed). Where a rank
 * reads a peer's buffer directly, it maps a peer's braidMemAlloc memory once
 * and reads it with plain loads, where other memory is read with
 * process_vm_readv, which pins and maps every page at every call; as
 * ncclMemAlloc serves NCCL's zero-copy paths. That is: all-to-alls in the
 * shared slots' pull window, 2-rank all-gathers, large shm messages its
 * receiver pulls (send/recv, scatter, all-to-all-v), and all-reduces,
 * reduce-scatters, all-gathers, all-to-alls, broadcasts and reduces on the
 * shared slots past their first chunk when every rank's buffers come from
 * here (for an all-reduce, inputs and outputs; for a reduce, the inputs and
 * the root's output, which the others write their folded parts into through
 * a writable mapping); README, "Launching".
 * Page aligned and zeroed; size must be positive. Any rank may use it or
 * not: results are the same. braidMemFree returns the pages to the system
 * at once, mapped by peers or not. The mapping is shared: a child forked
 * later writes the same pages. */
BRAID_API braidResult_t braidMemAlloc(void** ptr, size_t size);
/* Frees what braidMemAlloc returned; any other pointer (NULL included) is
 * braidInvalidArgument and changes nothing. */
BRAID_API braidResult_t braidMemFree(void* ptr);
BRAID_API braidResult_t braidCommCount(const braidComm_t comm, int* count);
BRAID_API braidResult_t braidCommUserRank(const braidComm_t comm, int* rank);

/* ---- Collectives ---------------------------------------------------------
 * In place, as NCCL: send == recv (all-gather: send == recv + rank*sendcount;
 * reduce-scatter: send + rank*recvcount == recv). All-to-all(v) has no in-place
 * form. Any other overlap of send and recv is InvalidArgument. Counts are in
 * elements.
 *
 * Buffers may be CUDA device memory (found with cudaPointerGetAttributes),
 * on every rank of a call or on none: braid stages them through page-locked
 * host memory, cutting all-reduce, broadcast and reduce into pieces whose
 * copies overlap the communication (BRAID_CUDA_CHUNK_BYTES). On a NULL stream
 * the device input must be ready when the call is made (synchronize the
 * stream that wrote it) and the output is in place when the call returns; on
 * a stream from braidStreamWrapCuda, ordering follows that CUDA stream.
 * Inside braidGroupStart/End each call's staging is taken at the call and the
 * group's copies run around its fused schedule (all on one device). */

BRAID_API braidResult_t braidAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       braidDataType_t datatype, braidRedOp_t op,
                                       braidComm_t comm, braidStream_t stream);
/* sendbuff is read on root only; recvbuff is written on every rank. */
BRAID_API braidResult_t braidBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                       braidDataType_t datatype, int root, braidComm_t comm,
                                       braidStream_t stream);
/* recvbuff is written on root only (it may be NULL elsewhere). */
BRAID_API braidResult_t braidReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    braidDataType_t datatype, braidRedOp_t op, int root,
                                    braidComm_t comm, braidStream_t stream);
/* recvbuff holds nranks*sendcount elements, rank r's at offset r*sendcount. */
BRAID_API braidResult_t braidAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       braidDataType_t datatype, braidComm_t comm,
                                       braidStream_t stream);
/* sendbuff holds nranks*recvcount elements; rank r receives block r reduced. */
BRAID_API braidResult_t braidReduceScatter(const void* sendbuff, void* recvbuff,
                                           size_t recvcount, braidDataType_t datatype,
                                           braidRedOp_t op, braidComm_t comm,
                                           braidStream_t stream);
/* count elements to and from each peer: block p of sendbuff goes to rank p,
 * block p of recvbuff comes from rank p. */
BRAID_API braidResult_t braidAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                      braidDataType_t datatype, braidComm_t comm,
                                      braidStream_t stream);
/* Rooted as NCCL 2.28's ncclGather / ncclScatter, counts per rank. Gather:
 * every rank's count elements go to root, rank r's at recvbuff + r*count
 * there; recvbuff is written on root only (it may be NULL elsewhere); in
 * place when sendbuff == recvbuff + root*count on root. Scatter: block r of
 * root's nranks*count elements goes to rank r's recvbuff; sendbuff is read
 * on root only (it may be NULL elsewhere); in place when recvbuff ==
 * sendbuff + root*count on root. */
BRAID_API braidResult_t braidGather(const void* sendbuff, void* recvbuff, size_t count,
                                    braidDataType_t datatype, int root, braidComm_t comm,
                                    braidStream_t stream);
BRAID_API braidResult_t braidScatter(const void* sendbuff, void* recvbuff, size_t count,
                                     braidDataType_t datatype, int root, braidComm_t comm,
                                     braidStream_t stream);
/* Counts and displacements in elements, nranks entries each. sendcounts[p] on
 * this rank must equal recvcounts[me] on rank p. In place is not supported. */
BRAID_API braidResult_t braidAllToAllv(const void* sendbuff, const size_t sendcounts[],
                                       const size_t sdispls[], void* recvbuff,
                                       const size_t recvcounts[], const size_t rdispls[],
                                       braidDataType_t datatype, braidComm_t comm,
                                       braidStream_t stream);
/* Point to point. Matched in order per (sender, receiver) pair; the counts
 * must agree. Inside braidGroupStart/End, sends and receives to different
 * peers progress concurrently. */
BRAID_API braidResult_t braidSend(const void* sendbuff, size_t count, braidDataType_t datatype,
                                  int peer, braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidRecv(void* recvbuff, size_t count, braidDataType_t datatype,
                                  int peer, braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidBarrier(braidComm_t comm, braidStream_t stream);

/* ---- PreMulSum ------------------------------------------------------------
 * A sum in which each rank's input is first multiplied by a scalar of its
 * own, as NCCL's ncclRedOpCreatePreMulSum (e.g. gradients scaled by 1/nranks
 * within the all-reduce). The op made here is valid on `comm` only, for
 * all-reduce, reduce and reduce-scatter of `datatype` only, until
 * braidRedOpDestroy; ops already issued keep their scalar. The product
 * follows Prod's rules (integers wrap, low-precision floats through fp32 and
 * rounded back once). Ranks may pass different scalars but must all use a
 * PreMulSum op for the call.
 *
 * braidScalarHostImmediate: *scalar (one value of datatype, in host memory)
 * is read once, here. braidScalarDevice (a scalar read from device memory
 * when the op runs) is NotSupported in this version. */
typedef enum BRAID_ENUM_INT { braidScalarDevice = 0, braidScalarHostImmediate = 1 } braidScalarResidence_t;

BRAID_API braidResult_t braidRedOpCreatePreMulSum(braidRedOp_t* op, void* scalar, braidDataType_t datatype,
                                                  braidScalarResidence_t residence, braidComm_t comm);
BRAID_API braidResult_t braidRedOpDestroy(braidRedOp_t op, braidComm_t comm);

/* ---- Quantized collectives ---------------------------------------------- */

/* The values cross the wire in a narrower format and are widened again on
 * arrival, for tensors that tolerate it (DLRM's pooled embeddings and their
 * gradients: fp16 forward, bf16 backward). Input and output stay braidFloat32
 * or braidBfloat16; encoding, transfer and decoding overlap chunk by chunk.
 * Every rank receives exactly decode(encode(x)) of what its peer sent (its own
 * block too): the wire adds no error beyond the codec's, whose bounds are:
 *   Float16   |err| <= 2^-11 |x| + 2^-25 / lossScale, round to nearest even,
 *             saturating at +-65504 / lossScale (never inf from a finite x)
 *   Bfloat16  |err| <= 2^-8 |x| + 2^-134
 *   Float8e4m3 / Float8e5m2: one power-of-two scale per block of blockSize
 *             values (sent with the block); with amax the block's largest |x|:
 *             e4m3 |err| <= max(2^-4 |x|, 2^-17 amax), e5m2 <= max(2^-3 |x|, 2^-31 amax)
 * NaN stays NaN, inf stays inf (e4m3 has none: it becomes NaN). Ranks must pass
 * the same codec (a mismatch fails with braidRemoteError) and the same config.
 * braidCodecNone runs the plain collective. */
typedef enum BRAID_ENUM_INT {
  braidCodecNone = 0,
  braidCodecFloat16 = 1,
  braidCodecBfloat16 = 2,
  braidCodecFloat8e4m3 = 3,
  braidCodecFloat8e5m2 = 4,
  braidNumCodecs = 5
} braidCodec_t;

/* Per-call codec settings; start from BRAID_QUANT_CONFIG_INITIALIZER. A NULL
 * config means the initializer's values. Per call rather than per
 * communicator because a dynamic loss scale changes from step to step. */
#define BRAID_QUANT_CONFIG_MAGIC 0x62727163u /* "brqc" */
#define BRAID_QUANT_CONFIG_VERSION 1
typedef struct {
  size_t size;          /* sizeof(braidQuantConfig_t), set by the initializer */
  unsigned int magic;   /* BRAID_QUANT_CONFIG_MAGIC */
  unsigned int version; /* BRAID_QUANT_CONFIG_VERSION */
  float lossScale;      /* Float16 only (1 otherwise): in [2^-64, 2^64]; multiplies
                           before encoding, divides after decoding. 1: none */
  unsigned int blockSize; /* fp8 only: values per scaled block, a multiple of 8 in
                             [8, 65536]; 0: the default (256) */
} braidQuantConfig_t;

#define BRAID_QUANT_CONFIG_INITIALIZER \
  { sizeof(braidQuantConfig_t), BRAID_QUANT_CONFIG_MAGIC, BRAID_QUANT_CONFIG_VERSION, 1.0f, 0 }

/* As braidAllToAll / braidAllToAllv / braidAllGather (counts in elements of
 * datatype, which is braidFloat32 or braidBfloat16), with the wire in codec. */
BRAID_API braidResult_t braidAllToAllQuantized(const void* sendbuff, void* recvbuff, size_t count,
                                               braidDataType_t datatype, braidCodec_t codec,
                                               braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidAllToAllvQuantized(const void* sendbuff, const size_t sendcounts[],
                                                const size_t sdispls[], void* recvbuff,
                                                const size_t recvcounts[], const size_t rdispls[],
                                                braidDataType_t datatype, braidCodec_t codec,
                                                braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidAllGatherQuantized(const void* sendbuff, void* recvbuff, size_t sendcount,
                                                braidDataType_t datatype, braidCodec_t codec,
                                                braidComm_t comm, braidStream_t stream);
/* The same with codec settings (config may be NULL). */
BRAID_API braidResult_t braidAllToAllQuantizedConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                     braidDataType_t datatype, braidCodec_t codec,
                                                     const braidQuantConfig_t* config,
                                                     braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidAllToAllvQuantizedConfig(const void* sendbuff, const size_t sendcounts[],
                                                      const size_t sdispls[], void* recvbuff,
                                                      const size_t recvcounts[], const size_t rdispls[],
                                                      braidDataType_t datatype, braidCodec_t codec,
                                                      const braidQuantConfig_t* config,
                                                      braidComm_t comm, braidStream_t stream);
BRAID_API braidResult_t braidAllGatherQuantizedConfig(const void* sendbuff, void* recvbuff,
                                                      size_t sendcount, braidDataType_t datatype,
                                                      braidCodec_t codec,
                                                      const braidQuantConfig_t* config,
                                                      braidComm_t comm, braidStream_t stream);

/* Calls between GroupStart and GroupEnd are validated and queued; GroupEnd
 * launches them together (one fused schedule per communicator), so a user can
 * write all-to-all-v as a group of sends and receives. Groups nest; only the
 * outermost GroupEnd launches. All calls in a group on one communicator must
 * use the same stream. Per thread. */
BRAID_API braidResult_t braidGroupStart(void);
BRAID_API braidResult_t braidGroupEnd(void);

/* ---- Streams and events ------------------------------------------------- */

BRAID_API braidResult_t braidStreamCreate(braidStream_t* stream);
/* A braid stream ordered with a CUDA stream (cudaStream_t passed as void*;
 * NULL is the legacy default stream), created on the device that owns it:
 * an op queued on it runs after the work queued on cudaStream before the
 * call, and work queued on cudaStream after the call waits for the op. The
 * calling thread does not wait for the GPU: the CUDA stream waits on a
 * flag that braid's worker sets when the op is over (cuStreamWaitValue32, or
 * a host function where the driver lacks it). Errors surface in braidStreamSynchronize /
 * braidStreamQuery of the braid stream; a failed op still releases the CUDA
 * stream. braidStreamDestroy waits for queued ops; the CUDA stream must
 * outlive them. braidNotSupported (with the reason) without a CUDA device. */
BRAID_API braidResult_t braidStreamWrapCuda(void* cudaStream, braidStream_t* stream);
/* Waits for the queued work, then frees the stream. */
BRAID_API braidResult_t braidStreamDestroy(braidStream_t stream);
/* Blocks until every op queued so far has finished; returns the first error
 * any of them hit since the last synchronize. */
BRAID_API braidResult_t braidStreamSynchronize(braidStream_t stream);
/* Success when idle, braidInProgress while work is queued, or the error. */
BRAID_API braidResult_t braidStreamQuery(braidStream_t stream);

BRAID_API braidResult_t braidEventCreate(braidEvent_t* event);
/* Marks the point in stream after everything queued so far. */
BRAID_API braidResult_t braidEventRecord(braidEvent_t event, braidStream_t stream);
/* Success once the marked point has been reached (or never recorded),
 * braidInProgress before. */
BRAID_API braidResult_t braidEventQuery(braidEvent_t event);
BRAID_API braidResult_t braidEventSynchronize(braidEvent_t event);
BRAID_API braidResult_t braidEventDestroy(braidEvent_t event);

#ifdef __cplusplus
}
#endif

#endif /* BRAID_BRAID_H_ */
