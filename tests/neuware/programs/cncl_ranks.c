/* cncl from C across processes: two ranks, one device each, collectives checked against the values each rank
 * computes itself.
 *   cncl_ranks fork              the parent makes the clique id, forks, and both processes are ranks
 *   cncl_ranks file RANK PATH    separate processes; rank 0 writes the clique id to PATH, rank 1 reads it
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cncl.h>

#include "check.h"

enum { NRANK = 2, SMALL = 1000, LARGE = 1 << 20 };

static void sleep_a_little(void *data) { (void)data; usleep(50000); }

static int write_id(const char *path, const cnclCliqueId *id) {
  char partial[4096];
  snprintf(partial, sizeof partial, "%s.partial", path);
  FILE *file = fopen(partial, "wb");
  if (!file || fwrite(id, sizeof *id, 1, file) != 1 || fclose(file) != 0) return 1;
  return rename(partial, path);
}

static int read_id(const char *path, cnclCliqueId *id) {
  for (int attempt = 0; attempt < 3000; attempt++) { /* up to 30 s */
    FILE *file = fopen(path, "rb");
    if (file) {
      size_t got = fread(id, sizeof *id, 1, file);
      fclose(file);
      if (got == 1) return 0;
    }
    usleep(10000);
  }
  return 1;
}

static void all_reduce(cnclComm_t comm, int rank, cnrtQueue_t queue, int count) {
  float *host = malloc(sizeof(float) * count);
  for (int i = 0; i < count; i++) host[i] = (float)((rank + 1) * (i % 1000));
  void *send = NULL, *recv = NULL;
  OK(cnrtMalloc(&send, sizeof(float) * count));
  OK(cnrtMalloc(&recv, sizeof(float) * count));
  OK(cnrtMemcpy(send, host, sizeof(float) * count, cnrtMemcpyHostToDev));
  OK(cnclAllReduce(send, recv, count, cnclFloat, cnclSum, comm, queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host, recv, sizeof(float) * count, cnrtMemcpyDevToHost));
  int bad = 0;
  for (int i = 0; i < count; i++) bad += host[i] != 3.0f * (float)(i % 1000); /* (1 + 2) * value */
  EXPECT(bad == 0, "rank %d: %d of %d allReduce sums wrong (host[7] = %g)", rank, bad, count, host[7]);
  OK(cnrtFree(send));
  OK(cnrtFree(recv));
  free(host);
}

static void all_gather_and_broadcast(cnclComm_t comm, int rank, cnrtQueue_t queue) {
  int32_t mine[4], gathered[4 * NRANK], root_data[4];
  for (int i = 0; i < 4; i++) mine[i] = 100 * rank + i;
  void *send = NULL, *recv = NULL, *bcast = NULL;
  OK(cnrtMalloc(&send, sizeof mine));
  OK(cnrtMalloc(&recv, sizeof gathered));
  OK(cnrtMalloc(&bcast, sizeof root_data));
  OK(cnrtMemcpy(send, mine, sizeof mine, cnrtMemcpyHostToDev));
  OK(cnclAllGather(send, recv, 4, cnclInt32, comm, queue));
  OK(cnclBroadcast(send, bcast, 4, cnclInt32, 1, comm, queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(gathered, recv, sizeof gathered, cnrtMemcpyDevToHost));
  OK(cnrtMemcpy(root_data, bcast, sizeof root_data, cnrtMemcpyDevToHost));
  EXPECT(gathered[0] == 0 && gathered[3] == 3 && gathered[4] == 100 && gathered[7] == 103, "rank %d gathered %d %d",
         rank, gathered[4], gathered[7]);
  EXPECT(root_data[0] == 100 && root_data[3] == 103, "rank %d broadcast from rank 1: %d", rank, root_data[0]);
  FAILS_WITH(cnclAllReduce(send, recv, 4, (cnclDataType_t)0x77, cnclSum, comm, queue), CNCL_RET_ERR_ARGUMENTS,
             "data_type");
  EXPECT(strstr(cnclGetErrorStr(CNCL_RET_ERR_ARGUMENTS), "data_type") != NULL, "%s",
         cnclGetErrorStr(CNCL_RET_ERR_ARGUMENTS));
  OK(cnrtFree(send));
  OK(cnrtFree(recv));
  OK(cnrtFree(bcast));
}

static int run_rank(int rank, cnclCliqueId *id) {
  int device = 0, got_rank = -1, count = -1, got_device = -1;
  cnclComm_t comm = NULL;
  OK(cnclInitComms(&comm, 1, &device, &rank, NRANK, id));
  OK(cnclGetCommRank(&got_rank, comm));
  OK(cnclGetCommCount(&count, comm));
  OK(cnclGetCommDevice(&got_device, comm));
  EXPECT(got_rank == rank && count == NRANK && got_device == 0, "comm says rank %d of %d on %d", got_rank, count,
         got_device);
  cnrtQueue_t queue = NULL;
  OK(cnrtQueueCreate(&queue));
  all_reduce(comm, rank, queue, SMALL);
  all_reduce(comm, rank, queue, LARGE);
  all_gather_and_broadcast(comm, rank, queue);
  EXPECT(cnclGetCommAsyncError(comm) == CNCL_RET_SUCCESS, "async error");
  OK(cnclFreeComm(comm));
  FAILS_WITH(cnclGetCommRank(&got_rank, comm), CNCL_RET_ERR_ARGUMENTS, "comm");
  OK(cnrtQueueDestroy(queue));
  printf("rank %d: ", rank);
  return check_failures;
}

int main(int argc, char **argv) {
  cnclCliqueId id;
  if (argc == 2 && strcmp(argv[1], "fork") == 0) {
    OK(cnclGetCliqueId(&id));
    /* the parent has Python state, a queue worker thread and work in flight when it forks */
    cnrtQueue_t busy = NULL;
    OK(cnrtQueueCreate(&busy));
    OK(cnrtInvokeHostFunc(busy, sleep_a_little, NULL));
    pid_t child = fork();
    if (child < 0) return 2;
    if (child == 0) {
      run_rank(1, &id);
      DONE();
    }
    OK(cnrtQueueSync(busy));
    run_rank(0, &id);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked rank failed (status %d)", status);
    DONE();
  }
  if (argc == 4 && strcmp(argv[1], "file") == 0) {
    int rank = atoi(argv[2]);
    if (rank == 0) {
      OK(cnclGetCliqueId(&id));
      EXPECT(write_id(argv[3], &id) == 0, "could not write %s", argv[3]);
    } else {
      EXPECT(read_id(argv[3], &id) == 0, "no clique id appeared in %s", argv[3]);
    }
    run_rank(rank, &id);
    DONE();
  }
  fprintf(stderr, "usage: %s fork | file RANK PATH\n", argv[0]);
  return 2;
}
