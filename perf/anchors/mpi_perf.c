/*
 * mpi-perf: the anchor for braid-perf. The same sweep as `braid-perf <coll>`
 * (float sum, nccl-tests columns and busbw factors, every result checked) run on
 * MPI, so that speed claims are ratios measured on the same machine and sizes.
 *
 *   mpirun -np 4 mpi-perf allreduce -b 8 -e 64M -f 2 -n 20 -w 5
 *
 * Collectives: allreduce, allgather, reducescatter, alltoall, broadcast.
 * Output (rank 0): size count type redop root time(us) algbw busbw #wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST } coll_t;

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

/* Bytes of the buffer nccl-tests calls "size" -> elements per rank, and the
 * busbw factor, per collective. */
static double bus_factor(coll_t c, int n) {
  switch (c) {
    case ALLREDUCE: return 2.0 * (n - 1) / n;
    case ALLGATHER: case REDUCESCATTER: case ALLTOALL: return (double)(n - 1) / n;
    default: return 1.0;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpi-perf allreduce|allgather|reducescatter|alltoall|broadcast [-b min] [-e max] [-f factor] [-n iters] [-w warmup]\n");
    MPI_Finalize();
    return 2;
  }
  coll_t coll;
  if (!strcmp(argv[1], "allreduce")) coll = ALLREDUCE;
  else if (!strcmp(argv[1], "allgather")) coll = ALLGATHER;
  else if (!strcmp(argv[1], "reducescatter")) coll = REDUCESCATTER;
  else if (!strcmp(argv[1], "alltoall")) coll = ALLTOALL;
  else if (!strcmp(argv[1], "broadcast")) coll = BROADCAST;
  else { if (rank == 0) fprintf(stderr, "unknown collective %s\n", argv[1]); MPI_Finalize(); return 2; }
  size_t minb = 8, maxb = 64 << 20;
  int factor = 2, iters = 20, warmup = 5;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) minb = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-e")) maxb = parse_size(argv[i + 1]);
    else if (!strcmp(argv[i], "-f")) factor = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
  }
  if (rank == 0) {
    printf("# mpi-perf %s, %d ranks, float sum\n", argv[1], n);
    printf("#%11s %12s %8s %6s %6s %10s %8s %8s %6s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
    printf("#%11s %12s %8s %6s %6s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  double busSum = 0;
  int points = 0, anyWrong = 0;
  for (size_t bytes = minb; bytes <= maxb; bytes *= factor) {
    size_t count = bytes / sizeof(float); /* elements of the "size" buffer */
    size_t per = (coll == ALLREDUCE || coll == BROADCAST) ? count : count / n;
    if (per == 0) continue;
    size_t sendElems = (coll == ALLGATHER) ? per : (coll == ALLREDUCE || coll == BROADCAST) ? per : per * n;
    size_t recvElems = (coll == REDUCESCATTER) ? per : (coll == ALLREDUCE || coll == BROADCAST) ? per : per * n;
    float* send = malloc(sendElems * sizeof(float));
    float* recv = malloc(recvElems * sizeof(float));
    for (size_t i = 0; i < sendElems; ++i) send[i] = (float)((rank + i) % 7);
    double t = 0;
    for (int it = -warmup; it < iters; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      switch (coll) {
        case ALLREDUCE: MPI_Allreduce(send, recv, (int)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case ALLGATHER: MPI_Allgather(send, (int)per, MPI_FLOAT, recv, (int)per, MPI_FLOAT, MPI_COMM_WORLD); break;
        case REDUCESCATTER: MPI_Reduce_scatter_block(send, recv, (int)per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case ALLTOALL: MPI_Alltoall(send, (int)per, MPI_FLOAT, recv, (int)per, MPI_FLOAT, MPI_COMM_WORLD); break;
        case BROADCAST:
          if (rank == 0) memcpy(recv, send, per * sizeof(float));
          MPI_Bcast(recv, (int)per, MPI_FLOAT, 0, MPI_COMM_WORLD);
          break;
      }
      if (it >= 0) t += MPI_Wtime() - t0;
    }
    /* Check the last result against values computed here. */
    long wrong = 0;
    for (size_t i = 0; i < recvElems; ++i) {
      float want = 0;
      switch (coll) {
        case ALLREDUCE: for (int r = 0; r < n; ++r) want += (float)((r + i) % 7); break;
        case REDUCESCATTER: for (int r = 0; r < n; ++r) want += (float)((r + rank * per + i) % 7); break;
        case ALLGATHER: want = (float)((i / per + i % per) % 7); break;
        case ALLTOALL: want = (float)((i / per + rank * per + i % per) % 7); break;
        case BROADCAST: want = (float)(i % 7); break;
      }
      if (recv[i] != want) wrong++;
    }
    double tmax;
    t = t / iters * 1e6;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long wrongAll = 0;
    MPI_Reduce(&wrong, &wrongAll, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    size_t sizeBytes = (coll == ALLREDUCE || coll == BROADCAST) ? per * 4 : per * n * 4;
    if (rank == 0) {
      double algbw = sizeBytes / tmax / 1e3, busbw = algbw * bus_factor(coll, n);
      printf("%12zu %12zu %8s %6s %6d %10.2f %8.3f %8.3f %6ld\n", sizeBytes, sizeBytes / 4, "float", "sum", 0, tmax, algbw, busbw, wrongAll);
      busSum += busbw;
      points++;
      if (wrongAll) anyWrong = 1;
    }
    free(send);
    free(recv);
  }
  if (rank == 0) printf("# Avg bus bandwidth    : %g\n", points ? busSum / points : 0.0);
  MPI_Finalize();
  return anyWrong;
}
