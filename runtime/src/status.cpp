//===- status.cpp - Status names and the per-thread last error ------------===//

#include "loom/runtime.h"

#include "comm_internal.h"

#include <string>

namespace {
thread_local std::string lastError;
} // namespace

loom_status loom::runtime::setError(loom_status status,
                                    const std::string &message) {
  lastError = message;
  return status;
}

extern "C" {

const char *loom_last_error(void) { return lastError.c_str(); }

const char *loom_status_name(loom_status status) {
  switch (status) {
  case LOOM_OK:
    return "LOOM_OK";
  case LOOM_ERROR_IO:
    return "LOOM_ERROR_IO";
  case LOOM_ERROR_CORRUPT:
    return "LOOM_ERROR_CORRUPT";
  case LOOM_ERROR_VERSION:
    return "LOOM_ERROR_VERSION";
  case LOOM_ERROR_TARGET:
    return "LOOM_ERROR_TARGET";
  case LOOM_ERROR_INVALID_ARGUMENT:
    return "LOOM_ERROR_INVALID_ARGUMENT";
  case LOOM_ERROR_NO_DEVICE:
    return "LOOM_ERROR_NO_DEVICE";
  case LOOM_ERROR_RANK_FAILED:
    return "LOOM_ERROR_RANK_FAILED";
  case LOOM_ERROR_INTERNAL:
    return "LOOM_ERROR_INTERNAL";
  case LOOM_ERROR_SIGNATURE:
    return "LOOM_ERROR_SIGNATURE";
  case LOOM_STATUS_MAX_ENUM:
    break;
  }
  return "LOOM_ERROR_UNKNOWN";
}

} // extern "C"
