// Text helpers of the partition fuzzer's mutations (partition_fuzz_mutate.cc): finding
// instructions, brackets, names and numbers in HLO text without parsing it, so that mutations
// can make text the parser or the verifier rejects.
#ifndef TESTS_PARTITION_FUZZ_TEXT_H_
#define TESTS_PARTITION_FUZZ_TEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace partition_fuzz {

inline constexpr size_t kNone = std::string::npos;

// Characters of an HLO name (letters, digits, `_`, `.`, `-`).
bool IsNameChar(char c);
std::string Join(const std::vector<int64_t>& values, const std::string& separator = ",");
// `s` cut to 60 characters, for a mutation's description.
std::string Brief(const std::string& s);
// The index of the bracket that closes the one at `open` ('(', '{' or '['), or kNone.
size_t MatchClose(const std::string& text, size_t open);
// Every start of `needle` in `text`.
std::vector<size_t> FindAll(const std::string& text, const std::string& needle);
// Splits `s` at commas outside brackets.
std::vector<std::string> SplitTopLevel(const std::string& s);
// `s` without leading and trailing spaces and tabs.
std::string Trim(const std::string& s);

// An instruction: `[ROOT] [%]name = SHAPE opcode(ARGS)ATTRIBUTES` on one logical line
// (physical lines are joined while a parenthesis is open or a line ends with a comma, as in
// XLA's tests, which wrap long instructions).
struct Instr {
  size_t begin = 0, end = 0;  // The logical line, without its last newline.
  std::string name;           // Without `%`.
  bool root = false;
  size_t shape_begin = 0, shape_end = 0;
  size_t opcode_begin = 0, opcode_end = 0;
  size_t args_begin = 0, args_end = 0;  // Inside the parentheses.
  std::string shape(const std::string& text) const {
    return text.substr(shape_begin, shape_end - shape_begin);
  }
  std::string opcode(const std::string& text) const {
    return text.substr(opcode_begin, opcode_end - opcode_begin);
  }
};

// The instruction on the logical line [begin, end), if it is one.
std::optional<Instr> ParseInstr(const std::string& text, size_t begin, size_t end);
// The end of the logical line starting at `begin`.
size_t LogicalLineEnd(const std::string& text, size_t begin);
// Every instruction of the text, in order.
std::vector<Instr> Instructions(const std::string& text);
// The instruction whose logical line holds `pos`, if any.
std::optional<Instr> InstrAt(const std::string& text, size_t pos);
// The names of an instruction's operands (typed operands `f32[2] %x` give `x`).
std::vector<std::string> OperandNames(const std::string& text, const Instr& in);
// Replaces the operand references to `from` (a name, with or without its `%`) in the operand
// lists that start at or after `begin`, where `choose` says yes; returns how many. Only operand
// lists: the same word may also be an opcode (`%copy = ... copy(...)`) or a computation.
int ReplaceOperand(std::string& text, const std::string& from, const std::string& to, size_t begin,
                   const std::function<bool()>& choose);
// The rank of each array leaf of a shape's text (`f32[8,2]{1,0}` -> {2}; tuples in order).
std::vector<int64_t> LeafRanks(const std::string& shape);
// The header's num_partitions (1 when it states none).
int64_t NumPartitions(const std::string& text);
std::vector<int64_t> PrimeFactors(int64_t n);
std::vector<int64_t> Divisors(int64_t n);

}  // namespace partition_fuzz

#endif  // TESTS_PARTITION_FUZZ_TEXT_H_
