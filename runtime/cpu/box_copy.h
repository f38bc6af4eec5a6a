// Copies of rectangular boxes between dense row-major arrays: the data movement behind
// all-gather, all-to-all and reduce-scatter, and behind slicing full arrays into per-device
// shards and assembling them again (verify.h).
#ifndef RUNTIME_CPU_BOX_COPY_H_
#define RUNTIME_CPU_BOX_COPY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/ir/literal.h"

namespace runtime {

// Copies the box of `sizes` elements per dimension that starts at `src_offsets` in `src` to
// the box that starts at `dst_offsets` in `dst`. Trailing dimensions that both boxes cover
// completely are merged into one contiguous run, so copying whole rows (or whole arrays) is a
// single memcpy per run.
// REQUIRES-checked: `src` and `dst` are arrays of the same element type and rank, and both
// boxes lie inside their arrays; otherwise an InvalidArgument error.
absl::Status CopyBox(const hlo::Literal& src, absl::Span<const int64_t> src_offsets,
                     hlo::Literal& dst, absl::Span<const int64_t> dst_offsets,
                     absl::Span<const int64_t> sizes);

}  // namespace runtime

#endif  // RUNTIME_CPU_BOX_COPY_H_
