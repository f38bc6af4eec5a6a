#include "runtime/cpu/ops/custom_call_handlers.h"

namespace runtime {

CustomCallHandler FindCustomCallHandler(std::string_view target) {
  if (target == "__op$block_scaled_dot") return &HandleBlockScaledDot;
  if (target == "TopK") return &HandleTopK;
  if (CustomCallHandler handler = FindSpmdInternalHandler(target)) return handler;
  return FindDebugCustomCallHandler(target);
}

}  // namespace runtime
