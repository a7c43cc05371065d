/*===- mpi_comm_test.c - The communicator C API under mpirun --------------===*
 *
 * Written in C, to keep the API honest about being C. Modes:
 *   ok       every collective and a send/recv ring, results checked;
 *   abort    rank 1 fails after one collective: the job ends with an error;
 *   timeout  rank 1 skips a collective: rank 0 times out and ends the job;
 *   exit-first     rank 1 exits before the first collective;
 *   kill           rank 1 is killed (SIGKILL) between two all-reduces, so
 *                  its peers are inside the second when it dies;
 *   kill-in-ring   rank 1 is killed just before the send/recv ring, so its
 *                  peers wait in recv;
 *   hang-in-ring   rank 1 never joins the ring: rank 0 times out in recv.
 * In every failing mode the job must end with an error (mpirun's or the
 * communicator's) naming the rank, well before lit's timeout: no hang.
 * Prints "rank R of N: ok" per rank in mode ok.
 *
 * The second argument is the communicator's timeout in milliseconds. It
 * defaults to a minute so that the healthy collectives before a failure
 * never time out on a loaded machine (lit runs many MPI jobs at once, each
 * with more processes than cores); the modes that test the timeout itself
 * pass a short one.
 *
 *===----------------------------------------------------------------------===*/

#include "loom/comm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    loom_status s_ = (call);                                                   \
    if (s_ != LOOM_OK) {                                                       \
      fprintf(stderr, "rank %d: %s: %s\n", rank, loom_status_name(s_),         \
              loom_last_error());                                              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "rank %d: check failed: %s\n", rank, #cond);             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  loom_comm_options options;
  loom_comm_options_init(&options);
  options.timeout_ms = argc > 2 ? atoi(argv[2]) : 60000;
  loom_comm *comm = NULL;
  int rank = -1;
  CHECK(loom_comm_create_mpi(&options, &comm));
  rank = loom_comm_rank(comm);
  int size = loom_comm_size(comm);
  int failing = rank == 1;

  if (failing && strcmp(mode, "exit-first") == 0)
    _exit(3);

  float x[2] = {(float)rank, (float)(10 * rank)};
  CHECK(loom_comm_all_reduce(comm, x, x, 2, LOOM_DTYPE_F32, LOOM_REDUCE_SUM));
  float expected = (float)(size * (size - 1) / 2);
  EXPECT(x[0] == expected && x[1] == 10 * expected);

  if (strcmp(mode, "abort") == 0 && rank == 1)
    loom_comm_abort(comm, "kernel failed"); /* does not return */
  if (strcmp(mode, "timeout") == 0 && rank == 1) {
    sleep(30); /* never joins the next collective */
    return 0;
  }
  if (failing && strcmp(mode, "kill") == 0)
    raise(SIGKILL);

  int64_t v = 7 - rank, m = 0;
  CHECK(loom_comm_all_reduce(comm, &v, &m, 1, LOOM_DTYPE_I64, LOOM_REDUCE_MIN));
  EXPECT(m == 7 - (size - 1));
  int32_t mine = 100 + rank;
  int32_t *all = calloc((size_t)size, sizeof(int32_t));
  CHECK(loom_comm_all_gather(comm, &mine, all, sizeof(mine)));
  for (int i = 0; i < size; ++i)
    EXPECT(all[i] == 100 + i);
  free(all);
  /* Block j of rank r (10 * r + j) goes to rank j, in rank order. */
  int32_t *blocks = calloc((size_t)size, sizeof(int32_t));
  int32_t *received = calloc((size_t)size, sizeof(int32_t));
  for (int j = 0; j < size; ++j)
    blocks[j] = 10 * rank + j;
  CHECK(loom_comm_all_to_all(comm, blocks, received, sizeof(int32_t)));
  for (int i = 0; i < size; ++i)
    EXPECT(received[i] == 10 * i + rank);
  free(blocks);
  free(received);
  double b = rank == size - 1 ? 3.5 : 0.0;
  CHECK(loom_comm_broadcast(comm, &b, sizeof(b), size - 1));
  EXPECT(b == 3.5);
  if (failing && strcmp(mode, "kill-in-ring") == 0)
    raise(SIGKILL);
  if (failing && strcmp(mode, "hang-in-ring") == 0) {
    sleep(30);
    return 0;
  }
  int32_t token = rank * rank, got = -1;
  CHECK(loom_comm_send(comm, &token, sizeof(token), (rank + 1) % size));
  CHECK(loom_comm_recv(comm, &got, sizeof(got), (rank + size - 1) % size));
  EXPECT(got == ((rank + size - 1) % size) * ((rank + size - 1) % size));
  CHECK(loom_comm_barrier(comm));
  printf("rank %d of %d: ok\n", rank, size);
  fflush(stdout);
  loom_comm_free(comm);
  return 0;
}
