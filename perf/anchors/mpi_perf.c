/*
 * mpi-perf: the MPI anchor for braid-perf. The same sweep as `braid-perf <coll>`
 * (float sum, nccl-tests columns and busbw factors, every result checked) run on
 * an MPI library, so that speed claims are ratios measured on the same machine
 * and sizes. Built once per MPI found (mpi-perf-openmpi, mpi-perf-mpich), each by
 * that MPI's own compiler wrapper, and started by that MPI's own mpirun.
 *
 *   mpirun.openmpi -np 4 mpi-perf-openmpi allreduce -b 8 -e 64M -f 2 -n 20 -w 5
 *
 * Collectives: allreduce (MPI_Allreduce), allgather (MPI_Allgather),
 * reducescatter (MPI_Reduce_scatter_block), alltoall (MPI_Alltoall),
 * broadcast (MPI_Bcast, root 0), gather (MPI_Gather, root 0: checked on the
 * root, the only rank with a result), scatter (MPI_Scatter, root 0), reduce
 * (MPI_Reduce, root 0: checked on the root).
 *
 * Timing is braid-perf's (and nccl-tests'): one barrier, then -n back-to-back
 * calls, time / n; the reported time is the slowest rank's. "size" and
 * "count" mean what they mean in nccl-tests: size is the bytes of the largest
 * buffer (the gathered / scattered whole), count the elements each rank
 * contributes or receives. Output (rank 0):
 *   size count type redop root time(us) algbw busbw #wrong
 * Exit status 1 when any element was wrong.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, GATHER, SCATTER, REDUCE } coll_t;

static const char* const kNames[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                                     "broadcast", "gather",    "scatter",       "reduce"};
enum { kColls = sizeof kNames / sizeof kNames[0] };

static size_t parse_size(const char* s) {
  char* end = NULL;
  double v = strtod(s, &end);
  switch (*end) {
    case 'K': case 'k': v *= 1024; break;
    case 'M': case 'm': v *= 1024 * 1024; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
  }
  return (size_t)v;
}

/* nccl-tests' busbw factors (PERFORMANCE.md). */
static double bus_factor(coll_t c, int n) {
  switch (c) {
    case ALLREDUCE: return 2.0 * (n - 1) / n;
    case ALLGATHER: case REDUCESCATTER: case ALLTOALL: case GATHER: case SCATTER:
      return (double)(n - 1) / n;
    default: return 1.0;
  }
}

/* Whole-buffer collectives move `per` elements everywhere; the others move
 * `per` to or from each of the n ranks. */
static int whole(coll_t c) { return c == ALLREDUCE || c == BROADCAST || c == REDUCE; }

/* Input element i of `rank`: small integers, so float sums are exact. */
static float input(int rank, size_t i) { return (float)((rank + i) % 7); }

static void run_once(coll_t c, float* send, float* recv, int per) {
  switch (c) {
    case ALLREDUCE: MPI_Allreduce(send, recv, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD); break;
    case REDUCESCATTER: MPI_Reduce_scatter_block(send, recv, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD); break;
    case BROADCAST: MPI_Bcast(recv, per, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case REDUCE:
      MPI_Reduce(send, recv, per, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
  }
}

/* Element i of the result on `rank`, computed here. */
static float expected(coll_t c, int rank, int n, size_t per, size_t i) {
  float want = 0;
  switch (c) {
    case ALLREDUCE:
    case REDUCE:
      for (int r = 0; r < n; ++r) want += input(r, i);
      break;
    case REDUCESCATTER: for (int r = 0; r < n; ++r) want += input(r, rank * per + i); break;
    case ALLGATHER: case GATHER: want = input((int)(i / per), i % per); break;
    case ALLTOALL: want = input((int)(i / per), rank * per + i % per); break;
    case BROADCAST: want = input(0, i); break;
    case SCATTER: want = input(0, rank * per + i); break;
  }
  return want;
}

/* One size: returns the wrong elements summed over ranks (valid on rank 0),
 * *time_us the slowest rank's time per call. */
static long measure(coll_t c, int rank, int n, size_t per, int iters, int warmup, double* time_us) {
  /* Every rank gets the root's buffers (a scatter's n blocks, a gather's room
   * for n), though MPI reads or writes them only on the root. */
  const size_t sendElems = whole(c) || c == ALLGATHER || c == GATHER ? per : per * n;
  const size_t recvElems = whole(c) || c == REDUCESCATTER || c == SCATTER ? per : per * n;
  float* send = malloc(sendElems * sizeof(float));
  float* recv = malloc(recvElems * sizeof(float));
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "mpi-perf: out of memory for %zu elements\n", sendElems + recvElems);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (size_t i = 0; i < sendElems; ++i) send[i] = input(rank, i);
  /* Broadcast works in place on recv: the root's holds the data. */
  for (size_t i = 0; i < recvElems; ++i) recv[i] = c == BROADCAST && rank == 0 ? input(0, i) : -1.0f;

  for (int it = 0; it < warmup; ++it) run_once(c, send, recv, (int)per);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int it = 0; it < iters; ++it) run_once(c, send, recv, (int)per);
  double t = (MPI_Wtime() - t0) / iters * 1e6;

  long wrong = 0, wrongAll = 0;
  /* Only a gather's or a reduce's root has a result: MPI leaves the others'
   * recv alone. */
  const size_t resultElems = (c == GATHER || c == REDUCE) && rank != 0 ? 0 : recvElems;
  for (size_t i = 0; i < resultElems; ++i) wrong += recv[i] != expected(c, rank, n, per, i);
  MPI_Reduce(&t, time_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&wrong, &wrongAll, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  free(send);
  free(recv);
  return wrongAll;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int coll = -1;
  for (int k = 0; argc >= 2 && k < kColls; ++k)
    if (!strcmp(argv[1], kNames[k])) coll = k;
  if (coll < 0) {
    if (rank == 0)
      fprintf(stderr,
              "usage: mpi-perf allreduce|allgather|reducescatter|alltoall|broadcast|gather|scatter|reduce "
              "[-b min] [-e max] [-f factor] [-n iters] [-w warmup]\n");
    MPI_Finalize();
    return 2;
  }
  const coll_t c = (coll_t)coll;
  size_t minb = 8, maxb = 64 << 20;
  int factor = 2, iters = 20, warmup = 5;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) minb = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxb = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
  }
  if (factor < 2 || iters < 1 || warmup < 0 || minb < 1) {
    if (rank == 0) fprintf(stderr, "mpi-perf: need -f >= 2, -n >= 1, -w >= 0, -b >= 1\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    printf("# mpi-perf %s, %d ranks, float sum\n", kNames[c], n);
    printf("#%11s %12s %8s %6s %6s %10s %8s %8s %6s\n", "size", "count", "type", "redop", "root", "time",
           "algbw", "busbw", "#wrong");
    printf("#%11s %12s %8s %6s %6s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
           "(GB/s)", "");
  }
  /* As nccl-tests (and braid-perf): one untimed round at the largest size first. */
  size_t largest = 0;
  for (size_t bytes = minb; bytes <= maxb; bytes *= (size_t)factor) {
    const size_t per = whole(c) ? bytes / sizeof(float) : bytes / sizeof(float) / n;
    if (per > 0 && per <= INT_MAX) largest = per;
  }
  if (largest > 0 && warmup > 0) {
    double ignored = 0;
    (void)measure(c, rank, n, largest, 1, warmup, &ignored);
    if (rank == 0) printf("# warmed up: %d calls at %zu elements before the sweep\n", warmup, largest);
  }
  double busSum = 0;
  int points = 0, anyWrong = 0;
  for (size_t bytes = minb; bytes <= maxb; bytes *= (size_t)factor) {
    const size_t per = whole(c) ? bytes / sizeof(float) : bytes / sizeof(float) / n;
    if (per == 0 || per > INT_MAX) continue; /* as braid-perf: nothing to move, or beyond MPI's int */
    double tmax = 0;
    const long wrong = measure(c, rank, n, per, iters, warmup, &tmax);
    const size_t sizeBytes = (whole(c) ? per : per * n) * sizeof(float);
    if (rank == 0) {
      const double algbw = sizeBytes / tmax / 1e3, busbw = algbw * bus_factor(c, n);
      printf("%12zu %12zu %8s %6s %6d %10.2f %8.3f %8.3f %6ld\n", sizeBytes, per, "float", "sum", 0, tmax, algbw,
             busbw, wrong);
      fflush(stdout);
      busSum += busbw;
      points++;
      if (wrong) anyWrong = 1;
    }
  }
  if (rank == 0) printf("# Avg bus bandwidth    : %g\n", points ? busSum / points : 0.0);
  MPI_Finalize();
  return anyWrong;
}
