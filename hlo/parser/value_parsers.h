// Parsers for the typed values that appear inside HLO instructions: shapes (with layouts),
// literals, and the compact attribute syntaxes (window, padding, slice, dim_labels,
// replica groups). Each reads from a TextCursor and reports errors at the offending position.
#ifndef HLO_PARSER_VALUE_PARSERS_H_
#define HLO_PARSER_VALUE_PARSERS_H_

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/parser/text_cursor.h"

namespace hlo {

// `f32[2,3]{1,0}`, `(f32[], s32[4])`, `token[]`, `f32[<=4]`.
absl::StatusOr<Shape> ParseShape(TextCursor& cursor);
// Whether the text at the cursor starts a shape (a type name followed by `[`, or `(`).
bool LooksLikeShape(TextCursor& cursor);
// A literal of `shape`: scalars, nested braces for arrays, `( a, b )` for tuples. Fails without
// allocating if the literal would exceed 1 GiB.
absl::StatusOr<Literal> ParseLiteral(TextCursor& cursor, const Shape& shape);
// `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
absl::StatusOr<Window> ParseWindow(TextCursor& cursor);
// `0_0x1_1_2` (low_high[_interior] per dimension).
absl::StatusOr<PaddingConfig> ParsePadding(TextCursor& cursor);
// `{[0:2], [1:4:2]}`.
absl::StatusOr<std::vector<SliceDimension>> ParseSliceRanges(TextCursor& cursor);
// `b01f_01io->b01f`.
absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels(TextCursor& cursor);
// `{{0,1},{2,3}}` or `[2,4]<=[8]` / `[2,4]<=[4,2]T(1,0)`.
absl::StatusOr<ReplicaGroups> ParseReplicaGroups(TextCursor& cursor);
// `(params)->result`, the body of entry_computation_layout.
absl::StatusOr<ProgramShape> ParseProgramShape(TextCursor& cursor);
// `{1,0}` shape index.
absl::StatusOr<std::vector<int64_t>> ParseShapeIndex(TextCursor& cursor);

}  // namespace hlo

#endif  // HLO_PARSER_VALUE_PARSERS_H_
