// Scratch: runs every module in the given files with random args, reports status per module.
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include "hlo/ir/hlo_computation.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"
void Fill(hlo::Literal& l, std::mt19937& rng) {
  if (l.shape().IsTuple()) { for (auto& e : *l.mutable_tuple_elements()) Fill(e, rng); return; }
  if (!l.shape().IsArray()) return;
  auto t = l.shape().element_type();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (t == hlo::PrimitiveType::kPred) l.SetInt(i, rng() & 1);
    else if (hlo::IsFloatingPointType(t) || hlo::IsComplexType(t)) l.SetDouble(i, (int(rng() % 200) - 100) / 16.0);
    else if (hlo::IsIntegralType(t) && hlo::ByteWidth(t) >= 1) l.SetInt(i, int(rng() % 7) - 2 + (hlo::IsUnsignedIntegralType(t) ? 2 : 0));
  }
}
int main(int argc, char** argv) {
  std::mt19937 rng(1);
  for (int a = 1; a < argc; ++a) {
    std::ifstream in(argv[a]); std::stringstream ss; ss << in.rdbuf();
    auto m = hlo::ParseHloModule(ss.str(), argv[a]);
    if (!m.ok()) { std::cout << argv[a] << "\tPARSE\t" << m.status().message() << "\n"; continue; }
    const hlo::HloComputation* entry = (*m)->entry_computation();
    if (!entry) continue;
    std::vector<hlo::Literal> args;
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      args.emplace_back(entry->parameter_instruction(i)->shape()); Fill(args.back(), rng);
    }
    auto r = runtime::Evaluator(**m, {}).RunEntry(std::move(args));
    std::cout << argv[a] << "\t" << (r.ok() ? "OK" : "ERR") << "\t" << (r.ok() ? "" : std::string(r.status().message())) << "\n";
  }
}
