// roundtrip_check FILE...: parses each HLO file, prints it, re-parses the print and prints
// again, and reports files where the two prints differ (a quick local check of the text round
// trip; ../shared/tools/conformance --suite parser is the full one, proto included).
#include <fstream>
#include <iostream>
#include <sstream>
#include "hlo/parser/hlo_parser.h"
#include "hlo/ir/hlo_printer.h"
int main(int argc, char** argv) {
  int ok = 0, bad = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]); std::stringstream ss; ss << in.rdbuf();
    auto m = hlo::ParseHloModule(ss.str(), argv[i]);
    if (!m.ok()) { std::cout << "PARSE " << m.status().message() << "\n"; ++bad; continue; }
    std::string p1 = (*m)->ToString();
    auto m2 = hlo::ParseHloModule(p1, "print1");
    if (!m2.ok()) { std::cout << "REPARSE " << argv[i] << " " << m2.status().message() << "\n"; ++bad; continue; }
    std::string p2 = (*m2)->ToString();
    if (p1 != p2) { std::cout << "DIFF " << argv[i] << "\n"; std::ofstream("/tmp/rt/p1.hlo") << p1; std::ofstream("/tmp/rt/p2.hlo") << p2; ++bad; continue; }
    ++ok;
  }
  std::cout << ok << " ok, " << bad << " bad\n";
}
