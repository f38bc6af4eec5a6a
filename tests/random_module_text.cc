// The generated chain as module text: in the entry, or as the computation of a call, the body
// of a two-trip while loop, or a conditional's true branch (random_module_generator.h).
#include <tuple>

#include "tests/random_module_generator.h"

namespace random_module {

std::string ModuleGenerator::Reducers() const {
  std::string text;
  for (const auto& [used, name, op] :
       {std::tuple{uses_add_, "add", "add"}, std::tuple{uses_max_, "max", "maximum"}}) {
    if (!used) continue;
    const std::string n = name;
    text += n + " {\n  " + n + "_a = f32[] parameter(0)\n  " + n +
            "_b = f32[] parameter(1)\n  ROOT " + n + "_r = f32[] " + op + "(" + n + "_a, " + n +
            "_b)\n}\n\n";
  }
  return text;
}

std::string ModuleGenerator::Line(const Instruction& instr, bool root, const std::string& sharding,
                                  int64_t state_offset) const {
  std::string expression = instr.expression;
  if (state_offset >= 0 && expression.rfind("parameter(", 0) == 0) {
    const int64_t k = std::stoll(expression.substr(10));
    expression = "get-tuple-element(state), index=" + std::to_string(k + state_offset);
  }
  return std::string("  ") + (root ? "ROOT " : "") + instr.name + " = " + instr.shape + " " +
         expression + (sharding.empty() ? "" : ", sharding=" + sharding) + "\n";
}

std::vector<const ModuleGenerator::Instruction*> ModuleGenerator::Parameters() const {
  std::vector<const Instruction*> params(next_parameter_, nullptr);
  for (const Instruction& instr : instructions_) {
    if (instr.expression.rfind("parameter(", 0) == 0) {
      params[std::stoll(instr.expression.substr(10))] = &instr;
    }
  }
  return params;
}

std::string ModuleGenerator::CallText(const std::string& root_sharding) const {
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  text += "inner {\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding);
  }
  std::string args, shardings;
  text += "}\n\nENTRY main {\n" + EntryParameters(&args, &shardings);
  return text + "  ROOT result = " + instructions_.back().shape + " call(" + args +
         "), to_apply=inner" + (root_sharding.empty() ? "" : ", sharding=" + root_sharding) +
         "\n}\n";
}

std::string ModuleGenerator::EntryParameters(std::string* names, std::string* shardings) const {
  std::string text;
  for (const Instruction* param : Parameters()) {
    text += "  e_" + param->name + " = " + param->shape + " " + param->expression +
            (param->sharding.empty() ? "" : ", sharding=" + param->sharding) + "\n";
    *names += (names->empty() ? "e_" : ", e_") + param->name;
    *shardings += (shardings->empty() ? "" : ", ") +
                  (param->sharding.empty() ? std::string("{replicated}") : param->sharding);
  }
  return text;
}

std::string ModuleGenerator::ConditionalText(const std::string& root_sharding) const {
  const std::vector<const Instruction*> params = Parameters();
  const Instruction& last = instructions_.back();
  std::string state = "(";
  for (size_t i = 0; i < params.size(); ++i) state += (i ? ", " : "") + params[i]->shape;
  state += ")";
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  // True branch: the chain on the parameters in the tuple; false branch: zeros.
  text += "then_branch {\n  state = " + state + " parameter(0)\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding, 0);
  }
  text += "}\n\nelse_branch {\n  other = " + state + " parameter(0)\n";
  text += "  zero_fill = f32[] constant(0)\n";
  text += "  ROOT zeros = " + last.shape + " broadcast(zero_fill), dimensions={}\n}\n\n";
  std::string args, shardings;
  text += "ENTRY main {\n" + EntryParameters(&args, &shardings);
  text += "  take = pred[] parameter(" + std::to_string(params.size()) + "), sharding={replicated}\n";
  text += "  operands = " + state + " tuple(" + args + ")\n";
  return text + "  ROOT result = " + last.shape +
         " conditional(take, operands, operands), true_computation=then_branch, "
         "false_computation=else_branch" +
         (root_sharding.empty() ? "" : ", sharding=" + root_sharding) + "\n}\n";
}

std::string ModuleGenerator::WhileText(const std::string& root_sharding) const {
  const std::vector<const Instruction*> params = Parameters();
  const Instruction& last = instructions_.back();
  std::string state = "(s32[]";
  for (const Instruction* param : params) state += ", " + param->shape;
  state += ", " + last.shape + ")";
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  // Body: the chain on the parameters held in the state; the result goes to the last element.
  text += "body {\n  state = " + state + " parameter(0)\n";
  text += "  trip = s32[] get-tuple-element(state), index=0\n";
  for (const Instruction& instr : instructions_) {
    const bool root = &instr == &last;
    text += Line(instr, false, root ? root_sharding : instr.sharding, 1);
  }
  text += "  one = s32[] constant(1)\n  next = s32[] add(trip, one)\n";
  text += "  ROOT next_state = " + state + " tuple(next";
  for (const Instruction* param : params) text += ", " + param->name;
  text += ", " + last.name + ")\n}\n\n";
  text += "cond {\n  cstate = " + state + " parameter(0)\n";
  text += "  ctrip = s32[] get-tuple-element(cstate), index=0\n  limit = s32[] constant(2)\n";
  text += "  ROOT more = pred[] compare(ctrip, limit), direction=LT\n}\n\n";
  std::string args, shardings;
  text += "ENTRY main {\n" + EntryParameters(&args, &shardings);
  const std::string init = "zero" + (args.empty() ? "" : ", " + args);
  const std::string loop_sharding =
      "{{replicated}" + (shardings.empty() ? "" : ", " + shardings) + ", " +
      (root_sharding.empty() ? std::string("{replicated}") : root_sharding) + "}";
  text += "  zero = s32[] constant(0)\n  fill = f32[] constant(0)\n";
  text += "  init_result = " + last.shape + " broadcast(fill), dimensions={}\n";
  text += "  init = " + state + " tuple(" + init + ", init_result)\n";
  // Mostly the loop is annotated with its state's shardings; otherwise unannotated (replicated,
  // or whatever propagation gives it).
  text += "  loop = " + state + " while(init), condition=cond, body=body" +
          (annotate_loop_ ? ", sharding=" + loop_sharding : "") + "\n";
  return text + "  ROOT result = " + last.shape + " get-tuple-element(loop), index=" +
         std::to_string(params.size() + 1) +
         (root_sharding.empty() ? "" : ", sharding=" + root_sharding) + "\n}\n";
}

std::string ModuleGenerator::Text(const std::string& root_sharding) const {
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  text += "ENTRY main {\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding);
  }
  return text + "}\n";
}

}  // namespace random_module
