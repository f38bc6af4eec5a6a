// libFuzzer target for the HLO text parser and printer.
//
// Each input is read as HLO text. Inputs the parser rejects are fine (the parser must only not
// crash, leak or hit undefined behaviour under ASan/UBSan). Inputs it accepts must round-trip:
// the printed text must parse again and print identically (print(parse(print(m))) ==
// print(m), the contract in hlo/ir/hlo_printer.h). A violation is a real bug, reported with
// both texts on stderr and abort() so that libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"

namespace {

[[noreturn]] void Fail(std::string_view what, std::string_view printed, std::string_view detail) {
  std::fprintf(stderr,
               "ROUND-TRIP FAILURE: %.*s\n--- first print ---\n%.*s\n--- detail ---\n%.*s\n",
               static_cast<int>(what.size()), what.data(), static_cast<int>(printed.size()),
               printed.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text, "fuzz");
  if (!module.ok()) return 0;
  std::string printed;
  hlo::PrintModule(**module, &printed);
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> reparsed =
      hlo::ParseHloModule(printed, "printed");
  if (!reparsed.ok()) {
    Fail("the printed module does not parse", printed, hlo::ToStd(reparsed.status().message()));
  }
  std::string reprinted;
  hlo::PrintModule(**reparsed, &reprinted);
  if (reprinted != printed) Fail("print(parse(print(m))) != print(m)", printed, reprinted);
  return 0;
}
