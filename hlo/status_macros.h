// The project's three error-propagation macros (docs/style.md, "keep the error vocabulary
// small"). They work in any function that returns absl::Status or absl::StatusOr<T>.
//
//   RETURN_IF_ERROR(expr);         // expr is an absl::Status; returns it when not OK.
//   ASSIGN_OR_RETURN(lhs, expr);   // expr is an absl::StatusOr<T>; on OK moves the value
//                                  // into `lhs` (a declaration or an lvalue), else returns
//                                  // the status. Expands to several statements: do not use
//                                  // it as the body of an unbraced if/for.
//   RET_CHECK(cond);               // returns absl::InternalError("FILE:LINE: RET_CHECK
//                                  // failure: cond") when `cond` is false. For broken
//                                  // internal invariants, not for bad user input.
#ifndef HLO_STATUS_MACROS_H_
#define HLO_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status hlo_status_macros_status_ = (expr); \
    if (!hlo_status_macros_status_.ok()) {             \
      return hlo_status_macros_status_;                \
    }                                                  \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  HLO_STATUS_MACROS_ASSIGN_IMPL_(HLO_STATUS_MACROS_CONCAT_(hlo_statusor_, __LINE__), lhs, expr)

#define RET_CHECK(cond)                                                             \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      return ::absl::InternalError(                                                 \
          ::absl::StrCat(__FILE__, ":", __LINE__, ": RET_CHECK failure: ", #cond)); \
    }                                                                               \
  } while (false)

// Implementation details of ASSIGN_OR_RETURN; not for direct use.
#define HLO_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define HLO_STATUS_MACROS_CONCAT_(a, b) HLO_STATUS_MACROS_CONCAT_INNER_(a, b)
#define HLO_STATUS_MACROS_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // HLO_STATUS_MACROS_H_
