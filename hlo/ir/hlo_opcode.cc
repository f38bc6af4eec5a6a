// Opcode names, families and the element-type classes, read from HLO_OPCODE_LIST.
#include "hlo/ir/hlo_opcode.h"

#include <string>

#include "absl/container/flat_hash_map.h"

namespace hlo {

std::string_view HloOpcodeString(HloOpcode opcode) { return GetHloOpcodeTraits(opcode).name; }

HloOpcodeFamily GetHloOpcodeFamily(HloOpcode opcode) { return GetHloOpcodeTraits(opcode).family; }

std::optional<HloOpcode> StringToHloOpcode(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<std::string_view, HloOpcode>();
    for (int i = 0; i < kNumHloOpcodes; ++i) {
      map->emplace(op_traits::kTable[i].name, static_cast<HloOpcode>(i));
    }
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

bool IsOfElementTypes(PrimitiveType type, ElementTypeSet types) {
  if (type == PrimitiveType::kPred) return (types & kPredKind) != 0;
  if (IsSignedIntegralType(type)) return (types & kSignedKind) != 0;
  if (IsUnsignedIntegralType(type)) return (types & kUnsignedKind) != 0;
  if (IsComplexType(type)) return (types & kComplexKind) != 0;
  if (!IsFloatingPointType(type)) return false;
  return (types & kFloatKind) != 0 || ((types & kF32F64Kind) != 0 && (type == PrimitiveType::kF32 ||
                                                                      type == PrimitiveType::kF64));
}

std::string_view ElementTypesName(ElementTypeSet types) {
  using namespace op_traits;  // NOLINT: the table's vocabulary.
  static constexpr std::pair<ElementTypeSet, std::string_view> kNames[] = {
      {kFloating, "a floating-point"},
      {kFloatOrComplex, "a floating-point or complex"},
      {kIntegral, "an integral"},
      {kPredOrIntegral, "a pred or integral"},
      {kNumeric, "a numeric"},
      {kSignedNumeric, "a signed, floating-point or complex"},
      {kReal, "an integral or floating-point"},
      {kPredOrReal, "a pred, integral or floating-point"},
      {kF32OrF64, "an f32 or f64"},
      {kAnyType, "any array"},
  };
  for (const auto& [t, name] : kNames) {
    if (t == types) return name;
  }
  return "another";
}

}  // namespace hlo
