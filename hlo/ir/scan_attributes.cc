#include "hlo/ir/scan_attributes.h"

#include "absl/strings/numbers.h"

namespace hlo {

absl::StatusOr<ScanAttributes> ReadScanAttributes(const HloInstruction& scan) {
  ScanAttributes out;
  bool counted = false;
  for (const RawAttribute& raw : scan.attrs().raw_attributes) {
    if (raw.name == "num_carries") counted = absl::SimpleAtoi(raw.value, &out.num_carries);
    if (raw.name == "is_reverse") out.reverse = raw.value == "true";
    if (raw.name == "is_associative") out.associative = raw.value == "true";
  }
  if (!counted) {
    return absl::InvalidArgumentError("scan: needs an integer num_carries");
  }
  if (scan.dimensions().size() != 1) {
    return absl::InvalidArgumentError("scan: needs exactly one dimension");
  }
  out.dimension = scan.dimensions()[0];
  return out;
}

}  // namespace hlo
