// Opcode names and families, generated from HLO_OPCODE_LIST.
#include "hlo/ir/hlo_opcode.h"

#include <string>

#include "absl/container/flat_hash_map.h"

namespace hlo {
namespace {

struct OpcodeInfo {
  std::string_view name;
  HloOpcodeFamily family;
};

constexpr OpcodeInfo kOpcodeInfo[] = {
#define HLO_OPCODE_INFO(e, name, family) {name, HloOpcodeFamily::family},
    HLO_OPCODE_LIST(HLO_OPCODE_INFO)
#undef HLO_OPCODE_INFO
};

}  // namespace

std::string_view HloOpcodeString(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].name;
}

HloOpcodeFamily GetHloOpcodeFamily(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].family;
}

std::optional<HloOpcode> StringToHloOpcode(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<std::string_view, HloOpcode>();
    int i = 0;
    for (const OpcodeInfo& info : kOpcodeInfo) map->emplace(info.name, static_cast<HloOpcode>(i++));
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

}  // namespace hlo
