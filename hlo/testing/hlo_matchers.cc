// HloInstruction matchers; see the header.
#include "hlo/testing/hlo_matchers.h"

#include <functional>
#include <sstream>
#include <utility>

#include "hlo/ir/literal.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

void PrintTo(const HloInstruction* instr, std::ostream* os) {
  if (instr == nullptr) {
    *os << "(null)";
  } else {
    *os << instr->ToString();
  }
}

namespace testing {
namespace {

using ::testing::MatchResultListener;

// Checks one property; `Explain` writes what the instruction has instead.
class PropertyMatcher : public ::testing::MatcherInterface<const HloInstruction*> {
 public:
  using Check = std::function<bool(const HloInstruction&, std::ostream*)>;
  PropertyMatcher(std::string description, Check check)
      : description_(std::move(description)), check_(std::move(check)) {}

  bool MatchAndExplain(const HloInstruction* instr, MatchResultListener* listener) const override {
    if (instr == nullptr) {
      *listener << "is null";
      return false;
    }
    std::ostringstream why;
    const bool ok = check_(*instr, &why);
    if (!ok) *listener << why.str();
    return ok;
  }
  void DescribeTo(std::ostream* os) const override { *os << description_; }

 private:
  std::string description_;
  Check check_;
};

InstructionMatcher Property(std::string description, PropertyMatcher::Check check) {
  return ::testing::MakeMatcher(new PropertyMatcher(std::move(description), std::move(check)));
}

// An opcode and, when given, one matcher per operand.
class OpMatcher : public ::testing::MatcherInterface<const HloInstruction*> {
 public:
  OpMatcher(HloOpcode opcode, std::vector<InstructionMatcher> operands)
      : opcode_(opcode), operands_(std::move(operands)) {}

  bool MatchAndExplain(const HloInstruction* instr, MatchResultListener* listener) const override {
    if (instr == nullptr) {
      *listener << "is null";
      return false;
    }
    if (instr->opcode() != opcode_) {
      *listener << "%" << instr->name() << " is a " << HloOpcodeString(instr->opcode());
      return false;
    }
    if (operands_.empty()) return true;
    if (instr->operand_count() != static_cast<int64_t>(operands_.size())) {
      *listener << "%" << instr->name() << " has " << instr->operand_count() << " operands";
      return false;
    }
    for (size_t i = 0; i < operands_.size(); ++i) {
      ::testing::StringMatchResultListener inner;
      if (!operands_[i].MatchAndExplain(instr->operand(i), &inner)) {
        *listener << "operand " << i << " of %" << instr->name() << ": " << inner.str();
        return false;
      }
    }
    return true;
  }
  void DescribeTo(std::ostream* os) const override {
    *os << HloOpcodeString(opcode_);
    if (operands_.empty()) return;
    *os << "(";
    for (size_t i = 0; i < operands_.size(); ++i) {
      if (i > 0) *os << ", ";
      operands_[i].DescribeTo(os);
    }
    *os << ")";
  }

 private:
  HloOpcode opcode_;
  std::vector<InstructionMatcher> operands_;
};

std::string Join(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    out += (i > 0 ? "," : "") + std::to_string(values[i]);
  }
  return out + "}";
}

std::string JoinGroups(const std::vector<std::vector<int64_t>>& groups) {
  std::string out = "{";
  for (size_t i = 0; i < groups.size(); ++i) out += (i > 0 ? "," : "") + Join(groups[i]);
  return out + "}";
}

}  // namespace

std::vector<const HloInstruction*> Instructions(const HloComputation& computation) {
  std::vector<const HloInstruction*> all;
  for (const auto& instr : computation.instructions()) all.push_back(instr.get());
  return all;
}

std::vector<const HloInstruction*> Instructions(const HloModule& module) {
  std::vector<const HloInstruction*> all;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) all.push_back(instr.get());
  }
  return all;
}

const HloInstruction* FindInstruction(const HloComputation& computation, std::string_view name) {
  for (const auto& instr : computation.instructions()) {
    if (instr->name() == name) return instr.get();
  }
  return nullptr;
}

InstructionMatcher Op(HloOpcode opcode, std::vector<InstructionMatcher> operands) {
  return ::testing::MakeMatcher(new OpMatcher(opcode, std::move(operands)));
}

InstructionMatcher HasOpcode(HloOpcode opcode) { return Op(opcode); }

InstructionMatcher HasShape(std::string_view text) {
  const std::string want(text);
  return Property("has shape " + want, [want](const HloInstruction& instr, std::ostream* why) {
    const std::string have = instr.shape().ToString(false);
    *why << "%" << instr.name() << " has shape " << have;
    return have == want;
  });
}

InstructionMatcher HasSharding(std::string_view text) {
  const std::string want(text);
  absl::StatusOr<HloSharding> parsed = HloSharding::Parse(want);
  return Property("has sharding " + want, [want, parsed](const HloInstruction& instr,
                                                         std::ostream* why) {
    if (!parsed.ok()) {
      *why << "the expected sharding does not parse: " << parsed.status();
      return false;
    }
    if (!instr.has_sharding()) {
      *why << "%" << instr.name() << " has no sharding";
      return false;
    }
    *why << "%" << instr.name() << " has sharding " << instr.sharding().ToStringWithoutMetadata();
    return instr.sharding() == *parsed;
  });
}

InstructionMatcher HasNoSharding() {
  return Property("has no sharding", [](const HloInstruction& instr, std::ostream* why) {
    if (instr.has_sharding()) *why << "%" << instr.name() << " has " << instr.sharding().ToString();
    return !instr.has_sharding();
  });
}

InstructionMatcher Operand(int64_t i, InstructionMatcher m) {
  std::ostringstream description;
  description << "operand " << i << " ";
  m.DescribeTo(&description);
  return Property(description.str(), [i, m](const HloInstruction& instr, std::ostream* why) {
    if (i >= instr.operand_count()) {
      *why << "%" << instr.name() << " has " << instr.operand_count() << " operands";
      return false;
    }
    ::testing::StringMatchResultListener inner;
    const bool ok = m.MatchAndExplain(instr.operand(i), &inner);
    *why << "operand " << i << " of %" << instr.name() << ": " << inner.str();
    return ok;
  });
}

InstructionMatcher HasDimensions(std::vector<int64_t> dimensions) {
  return Property("has dimensions=" + Join(dimensions),
                  [dimensions](const HloInstruction& instr, std::ostream* why) {
                    *why << "%" << instr.name() << " has dimensions=" << Join(instr.dimensions());
                    return instr.dimensions() == dimensions;
                  });
}

InstructionMatcher HasReplicaGroups(std::vector<std::vector<int64_t>> groups) {
  return Property("has replica_groups=" + JoinGroups(groups),
                  [groups](const HloInstruction& instr, std::ostream* why) {
                    if (!instr.attrs().replica_groups.has_value()) {
                      *why << "%" << instr.name() << " has no replica_groups";
                      return false;
                    }
                    const auto have = instr.attrs().replica_groups->Expanded();
                    *why << "%" << instr.name() << " has replica_groups=" << JoinGroups(have);
                    return have == groups;
                  });
}

InstructionMatcher HasCustomCallTarget(std::string_view target) {
  const std::string want(target);
  return Property("calls " + want, [want](const HloInstruction& instr, std::ostream* why) {
    *why << "%" << instr.name() << " calls \"" << instr.attrs().custom_call_target << "\"";
    return instr.opcode() == HloOpcode::kCustomCall && instr.attrs().custom_call_target == want;
  });
}

InstructionMatcher HasIntValues(std::vector<int64_t> values) {
  return Property(
      "holds " + Join(values), [values](const HloInstruction& instr, std::ostream* why) {
        if (instr.opcode() != HloOpcode::kConstant || !instr.attrs().literal.has_value()) {
          *why << "%" << instr.name() << " is not a constant";
          return false;
        }
        const Literal& literal = *instr.attrs().literal;
        std::vector<int64_t> have;
        for (int64_t i = 0; i < literal.element_count(); ++i) have.push_back(literal.GetInt(i));
        *why << "%" << instr.name() << " holds " << Join(have);
        return have == values;
      });
}

}  // namespace testing
}  // namespace hlo
