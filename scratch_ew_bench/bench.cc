#include <chrono>
#include <cstring>
#include <iostream>
#include <vector>
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"
using namespace std::chrono;
double Time(const std::string& body, std::vector<hlo::Shape> shapes) {
  auto m = hlo::ParseHloModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
  if (!m.ok()) { std::cerr << m.status() << "\n"; return 0; }
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<hlo::Literal> args;
    for (auto& s : shapes) args.emplace_back(s);
    auto t0 = steady_clock::now();
    auto r = runtime::Evaluator(**m, {}).RunEntry(std::move(args));
    double t = duration<double>(steady_clock::now() - t0).count();
    if (!r.ok()) { std::cerr << r.status() << "\n"; return 0; }
    best = std::min(best, t);
  }
  return best;
}
int main() {
  const int64_t n = 16 << 20;  // 64 MiB of f32
  std::vector<uint8_t> a(n * 4, 1), b(n * 4);
  auto t0 = steady_clock::now();
  for (int i = 0; i < 3; ++i) std::memcpy(b.data(), a.data(), a.size());
  double memcpy_t = duration<double>(steady_clock::now() - t0).count() / 3;
  std::cout << "memcpy 64MiB: " << memcpy_t * 1e3 << " ms\n";
  auto f = hlo::Shape::Array(hlo::PrimitiveType::kF32, {n});
  double add = Time("a = f32[16777216] parameter(0)\nb = f32[16777216] parameter(1)\nROOT r = f32[16777216] add(a, b)", {f, f});
  std::cout << "add: " << add * 1e3 << " ms  ratio(memcpy/op)=" << memcpy_t / add << "\n";
  double chain = Time("a = f32[16777216] parameter(0)\nb = f32[16777216] parameter(1)\nc = f32[16777216] multiply(a, b)\nd = f32[16777216] add(c, a)\ne = f32[16777216] maximum(d, b)\nROOT r = f32[16777216] negate(e)", {f, f});
  std::cout << "chain of 4: " << chain * 1e3 << " ms  per-op ratio=" << memcpy_t / (chain / 4) << "\n";
  auto g = hlo::Shape::Array(hlo::PrimitiveType::kF32, {4096, 4096});
  double tr = Time("a = f32[4096,4096] parameter(0)\nROOT r = f32[4096,4096] transpose(a), dimensions={1,0}", {g});
  std::cout << "transpose 4096^2 f32: " << tr * 1e3 << " ms ratio=" << memcpy_t / tr << "\n";
  double bc = Time("a = f32[4096] parameter(0)\nROOT r = f32[4096,4096] broadcast(a), dimensions={0}", {hlo::Shape::Array(hlo::PrimitiveType::kF32, {4096})});
  std::cout << "broadcast dim0 to 4096^2: " << bc * 1e3 << " ms ratio=" << memcpy_t / bc << "\n";
  double cv = Time("a = f32[16777216] parameter(0)\nROOT r = bf16[16777216] convert(a)", {f});
  std::cout << "convert f32->bf16: " << cv * 1e3 << " ms ratio=" << memcpy_t / cv << "\n";
  double cmp = Time("a = f32[16777216] parameter(0)\nb = f32[16777216] parameter(1)\nROOT r = pred[16777216] compare(a, b), direction=LT", {f, f});
  std::cout << "compare: " << cmp * 1e3 << " ms ratio=" << memcpy_t / cmp << "\n";
  auto h = hlo::Shape::Array(hlo::PrimitiveType::kBF16, {n});
  double bfadd = Time("a = bf16[16777216] parameter(0)\nb = bf16[16777216] parameter(1)\nROOT r = bf16[16777216] add(a, b)", {h, h});
  std::cout << "bf16 add: " << bfadd * 1e3 << " ms\n";
  auto h16 = hlo::Shape::Array(hlo::PrimitiveType::kF16, {n});
  double f16add = Time("a = f16[16777216] parameter(0)\nb = f16[16777216] parameter(1)\nROOT r = f16[16777216] add(a, b)", {h16, h16});
  std::cout << "f16 add: " << f16add * 1e3 << " ms\n";
  double pad = Time("a = f32[4096,4096] parameter(0)\nz = f32[] constant(1)\nROOT r = f32[4098,4100] pad(a, z), padding=1_1x2_2", {g});
  std::cout << "pad: " << pad * 1e3 << " ms ratio=" << memcpy_t / pad << "\n";
}
