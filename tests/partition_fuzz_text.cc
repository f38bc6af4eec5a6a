// Text helpers of the partition fuzzer's mutations (partition_fuzz_text.h).
#include "tests/partition_fuzz_text.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace partition_fuzz {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

std::string Join(const std::vector<int64_t>& values, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(values[i]);
  }
  return out;
}

std::string Brief(const std::string& s) { return s.size() <= 60 ? s : s.substr(0, 57) + "..."; }

size_t MatchClose(const std::string& text, size_t open) {
  const char o = text[open];
  const char c = o == '(' ? ')' : o == '{' ? '}' : ']';
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == o) ++depth;
    if (text[i] == c && --depth == 0) return i;
  }
  return kNone;
}

std::vector<size_t> FindAll(const std::string& text, const std::string& needle) {
  std::vector<size_t> out;
  for (size_t at = text.find(needle); at != kNone; at = text.find(needle, at + 1)) {
    out.push_back(at);
  }
  return out;
}

std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string current;
  for (char c : s) {
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == kNone) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::optional<Instr> ParseInstr(const std::string& text, size_t begin, size_t end) {
  Instr in{begin, end};
  size_t i = begin;
  auto skip = [&] {
    while (i < end && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip();
  if (text.compare(i, 5, "ROOT ") == 0) {
    in.root = true;
    i += 5;
    skip();
  }
  if (i < end && text[i] == '%') ++i;
  const size_t name_begin = i;
  while (i < end && IsNameChar(text[i])) ++i;
  in.name = text.substr(name_begin, i - name_begin);
  skip();
  if (in.name.empty() || i >= end || text[i] != '=') return std::nullopt;
  ++i;
  skip();
  in.shape_begin = i;
  if (i < end && text[i] == '(') {
    i = MatchClose(text, i);
    if (i == kNone || i >= end) return std::nullopt;
    ++i;
  } else {
    while (i < end && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  }
  in.shape_end = i;
  skip();
  in.opcode_begin = i;
  while (i < end && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-')) ++i;
  in.opcode_end = i;
  if (in.opcode_end == in.opcode_begin || i >= end || text[i] != '(') return std::nullopt;
  const size_t close = MatchClose(text, i);
  if (close == kNone || close >= end) return std::nullopt;
  in.args_begin = i + 1;
  in.args_end = close;
  return in;
}

size_t LogicalLineEnd(const std::string& text, size_t begin) {
  int depth = 0;
  for (size_t at = begin;;) {
    size_t eol = text.find('\n', at);
    if (eol == kNone) eol = text.size();
    for (size_t i = at; i < eol; ++i) depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    const size_t last = eol == at ? kNone : text.find_last_not_of(" \t", eol - 1);
    const bool comma = last != kNone && last >= at && text[last] == ',';
    if ((depth <= 0 && !comma) || eol >= text.size()) return eol;
    at = eol + 1;
  }
}

std::vector<Instr> Instructions(const std::string& text) {
  std::vector<Instr> out;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = LogicalLineEnd(text, begin);
    if (std::optional<Instr> in = ParseInstr(text, begin, end)) out.push_back(*in);
    begin = end + 1;
  }
  return out;
}

std::optional<Instr> InstrAt(const std::string& text, size_t pos) {
  for (const Instr& in : Instructions(text)) {
    if (in.begin <= pos && pos < in.end) return in;
  }
  return std::nullopt;
}

std::vector<std::string> OperandNames(const std::string& text, const Instr& in) {
  std::vector<std::string> names;
  for (const std::string& piece :
       SplitTopLevel(text.substr(in.args_begin, in.args_end - in.args_begin))) {
    std::string token = Trim(piece);
    const size_t space = token.rfind(' ');
    if (space != kNone) token = token.substr(space + 1);
    if (!token.empty() && token[0] == '%') token = token.substr(1);
    if (token.empty() || !std::isalpha(static_cast<unsigned char>(token[0]))) continue;
    if (std::all_of(token.begin(), token.end(), IsNameChar)) names.push_back(token);
  }
  return names;
}

int ReplaceOperand(std::string& text, const std::string& from, const std::string& to, size_t begin,
                   const std::function<bool()>& choose) {
  std::vector<size_t> hits;
  for (const Instr& in : Instructions(text)) {
    if (in.args_begin < begin) continue;
    for (size_t at = text.find(from, in.args_begin); at != kNone && at < in.args_end;
         at = text.find(from, at + 1)) {
      const bool left = !IsNameChar(text[at - 1]);
      const bool right = !IsNameChar(text[at + from.size()]);
      if (left && right && choose()) hits.push_back(at);
    }
  }
  for (auto it = hits.rbegin(); it != hits.rend(); ++it) text.replace(*it, from.size(), to);
  return static_cast<int>(hits.size());
}

std::vector<int64_t> LeafRanks(const std::string& shape) {
  std::vector<int64_t> ranks;
  for (size_t open = shape.find('['); open != kNone; open = shape.find('[', open + 1)) {
    const size_t close = shape.find(']', open);
    if (close == kNone) break;
    const std::string dims = shape.substr(open + 1, close - open - 1);
    ranks.push_back(dims.empty() ? 0 : 1 + std::count(dims.begin(), dims.end(), ','));
  }
  return ranks;
}

int64_t NumPartitions(const std::string& text) {
  const size_t at = text.find("num_partitions=");
  if (at == kNone) return 1;
  return std::max<int64_t>(1, std::atoll(text.c_str() + at + 15));
}

std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> factors;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  if (n > 1) factors.push_back(n);
  return factors;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace partition_fuzz
