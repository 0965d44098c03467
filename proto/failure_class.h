// The one mapping between the failure classes of the store (db/failure_class.h, the one list)
// and the contract's enum mono.v1.FailureClass: the worker reports with it, the server records
// with it.
#pragma once

#include "db/failure_class.h"
#include "mono/v1/tuning.pb.h"

namespace mono {

inline v1::FailureClass failure_to_proto(db::FailureClass f) {
  switch (f) {
    case db::FailureClass::kNone: return v1::FAILURE_CLASS_UNSPECIFIED;
    case db::FailureClass::kCompileError: return v1::COMPILE_ERROR;
    case db::FailureClass::kResourceError: return v1::RESOURCE_ERROR;
    case db::FailureClass::kLaunchError: return v1::LAUNCH_ERROR;
    case db::FailureClass::kTimeout: return v1::TIMEOUT;
    case db::FailureClass::kWrongAnswer: return v1::WRONG_ANSWER;
    case db::FailureClass::kWorkerLost: return v1::WORKER_LOST;
  }
  return v1::FAILURE_CLASS_UNSPECIFIED;
}

// Values this build does not know (a newer peer) read as kNone.
inline db::FailureClass failure_from_proto(v1::FailureClass f) {
  switch (f) {
    case v1::COMPILE_ERROR: return db::FailureClass::kCompileError;
    case v1::RESOURCE_ERROR: return db::FailureClass::kResourceError;
    case v1::LAUNCH_ERROR: return db::FailureClass::kLaunchError;
    case v1::TIMEOUT: return db::FailureClass::kTimeout;
    case v1::WRONG_ANSWER: return db::FailureClass::kWrongAnswer;
    case v1::WORKER_LOST: return db::FailureClass::kWorkerLost;
    default: return db::FailureClass::kNone;
  }
}

}  // namespace mono
