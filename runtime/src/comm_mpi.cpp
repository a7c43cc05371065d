//===- comm_mpi.cpp - Communicators over MPI ------------------------------===//
//
// One rank per process, MPI_COMM_WORLD. Every operation is the
// non-blocking MPI call followed by polling MPI_Test until it completes or
// the timeout passes; an operation that cannot complete cannot be
// cancelled in MPI, so a timeout (like loom_comm_abort) ends the whole job
// with MPI_Abort after printing why. Sends are buffered: the data is
// copied and the request completes in the background (finished requests
// are reaped at every call and on free).
//
//===----------------------------------------------------------------------===//

#include "comm_internal.h"

// The C API only: Open MPI's (deprecated) C++ bindings would need
// libmpi_cxx at link time.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

using loom::runtime::setError;

namespace {

using Clock = std::chrono::steady_clock;

MPI_Datatype mpiType(loom_dtype dtype) {
  switch (dtype) {
  case LOOM_DTYPE_F32:
    return MPI_FLOAT;
  case LOOM_DTYPE_F64:
    return MPI_DOUBLE;
  case LOOM_DTYPE_I32:
    return MPI_INT32_T;
  case LOOM_DTYPE_I64:
    return MPI_INT64_T;
  default:
    return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpiOp(loom_reduce_op op) {
  switch (op) {
  case LOOM_REDUCE_SUM:
    return MPI_SUM;
  case LOOM_REDUCE_PROD:
    return MPI_PROD;
  case LOOM_REDUCE_MAX:
    return MPI_MAX;
  case LOOM_REDUCE_MIN:
    return MPI_MIN;
  case LOOM_REDUCE_OP_MAX_ENUM: // refused by loom_comm_all_reduce
    break;
  }
  return MPI_SUM;
}

class MPIComm final : public loom_comm {
public:
  MPIComm(std::chrono::milliseconds timeout, bool ownsMPI)
      : timeout(timeout), ownsMPI(ownsMPI) {
    MPI_Comm_rank(MPI_COMM_WORLD, &myRank);
    MPI_Comm_size(MPI_COMM_WORLD, &mySize);
  }

  ~MPIComm() override {
    for (Pending &p : pending)
      MPI_Wait(&p.request, MPI_STATUS_IGNORE);
    if (ownsMPI)
      MPI_Finalize();
  }

  int32_t rank() const override { return myRank; }
  int32_t size() const override { return mySize; }

  loom_status allReduce(const void *send, void *recv, size_t count,
                        loom_dtype dtype, loom_reduce_op op) override {
    MPI_Datatype type = mpiType(dtype);
    if (type == MPI_DATATYPE_NULL)
      return setError(LOOM_ERROR_INVALID_ARGUMENT,
                      std::string("all_reduce does not support dtype ") +
                          loom_dtype_name(dtype));
    MPI_Request request;
    MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, type,
                   mpiOp(op), MPI_COMM_WORLD, &request);
    return complete(request, "all_reduce");
  }

  loom_status allGather(const void *send, void *recv, size_t bytes) override {
    MPI_Request request;
    MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                   MPI_COMM_WORLD, &request);
    return complete(request, "all_gather");
  }

  loom_status allToAll(const void *send, void *recv, size_t bytes) override {
    MPI_Request request;
    MPI_Ialltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                  MPI_COMM_WORLD, &request);
    return complete(request, "all_to_all");
  }

  loom_status broadcast(void *buffer, size_t bytes, int32_t root) override {
    if (root < 0 || root >= mySize)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "broadcast root " +
                                                       std::to_string(root) +
                                                       " is out of range");
    MPI_Request request;
    MPI_Ibcast(buffer, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD, &request);
    return complete(request, "broadcast");
  }

  loom_status barrier() override {
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    return complete(request, "barrier");
  }

  loom_status send(const void *data, size_t bytes, int32_t dest) override {
    if (dest < 0 || dest >= mySize)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "send to rank " +
                                                       std::to_string(dest) +
                                                       " is out of range");
    reap();
    pending.emplace_back();
    Pending &p = pending.back();
    p.data.assign(static_cast<const char *>(data),
                  static_cast<const char *>(data) + bytes);
    MPI_Isend(p.data.data(), (int)bytes, MPI_BYTE, dest, kTag, MPI_COMM_WORLD,
              &p.request);
    return LOOM_OK;
  }

  loom_status recv(void *data, size_t bytes, int32_t source) override {
    if (source < 0 || source >= mySize)
      return setError(LOOM_ERROR_INVALID_ARGUMENT, "recv from rank " +
                                                       std::to_string(source) +
                                                       " is out of range");
    MPI_Request request;
    MPI_Irecv(data, (int)bytes, MPI_BYTE, source, kTag, MPI_COMM_WORLD,
              &request);
    return complete(request, "recv from rank " + std::to_string(source));
  }

  void abort(const char *reason) override {
    std::fprintf(stderr, "loom: rank %d failed: %s; aborting the MPI job\n",
                 myRank, reason ? reason : "aborted");
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

private:
  static constexpr int kTag = 0x100;

  struct Pending {
    std::vector<char> data;
    MPI_Request request;
  };

  /// Frees the buffers of sends that completed.
  void reap() {
    for (auto it = pending.begin(); it != pending.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? pending.erase(it) : std::next(it);
    }
  }

  /// Polls `request` until it completes; past the timeout, aborts the job.
  loom_status complete(MPI_Request &request, const std::string &op) {
    Clock::time_point deadline = Clock::now() + timeout;
    int done = 0;
    std::chrono::microseconds pause(1);
    while (true) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        break;
      if (Clock::now() > deadline) {
        std::string why = "timed out after " + std::to_string(timeout.count()) +
                          " ms in " + op;
        abort(why.c_str());
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
    reap();
    return LOOM_OK;
  }

  std::chrono::milliseconds timeout;
  bool ownsMPI;
  int myRank = 0, mySize = 1;
  std::list<Pending> pending;
};

} // namespace

extern "C" loom_status loom_comm_create_mpi(const loom_comm_options *options,
                                            loom_comm **comm) {
  if (!comm)
    return setError(LOOM_ERROR_INVALID_ARGUMENT, "null communicator pointer");
  std::chrono::milliseconds timeout;
  if (loom_status s = loom::runtime::resolveTimeout(options, timeout))
    return s;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS)
    return setError(LOOM_ERROR_NO_DEVICE, "MPI_Init failed");
  *comm = new MPIComm(timeout, !initialized);
  return loom::runtime::injectFaults(timeout, comm, 1);
}
