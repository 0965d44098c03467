// Early-return helpers for absl::Status / absl::StatusOr, internal to mono_db.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MONO_DB_CONCAT_INNER(a, b) a##b
#define MONO_DB_CONCAT(a, b) MONO_DB_CONCAT_INNER(a, b)

// Returns the status of `expr` (a Status) from the enclosing function unless it is OK.
#define MONO_RETURN_IF_ERROR(expr)             \
  do {                                         \
    absl::Status mono_status_ = (expr);        \
    if (!mono_status_.ok()) return mono_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its status from the enclosing function.
#define MONO_ASSIGN_OR_RETURN(lhs, expr) \
  MONO_ASSIGN_OR_RETURN_IMPL(MONO_DB_CONCAT(mono_statusor_, __LINE__), lhs, expr)
#define MONO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(*tmp)
