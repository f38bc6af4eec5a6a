// End-to-end: spmd-partition on malformed inputs. Each case checks the exit code (1), that the
// message is one `FILE:LINE:COL: error:` line at the expected place with the expected text, and
// that no output file is left behind.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace {

struct Case {
  const char* name;
  const char* text;      // File contents.
  const char* location;  // Expected "LINE:COL" after the file name; "" for no position.
  const char* message;   // Expected substring of the message.
};

const Case kCases[] = {
    {"empty", "", "1:1", "expected 'HloModule'"},
    {"no_module_keyword", "Module m\n", "1:1", "expected 'HloModule'"},
    {"no_module_name", "HloModule\n", "2:1", "expected a module name"},
    {"no_computation", "HloModule m\n", "2:1", "expected at least one computation"},
    {"truncated_body", "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n", "4:1",
     "expected '}' to close computation 'e'"},
    {"truncated_instruction", "HloModule m\nENTRY e {\n  p = f32[] param", "3:13",
     "unknown opcode 'param'"},
    {"unknown_opcode",
     "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] frob(p)\n}\n", "4:18",
     "unknown opcode 'frob'"},
    {"unknown_attribute",
     "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p), "
     "colour=red\n}\n",
     "4:29", "unknown attribute 'colour'"},
    {"unknown_module_attribute",
     "HloModule m, flavour=1\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", "1:14",
     "unknown module attribute 'flavour'"},
    {"bad_type", "HloModule m\nENTRY e {\n  ROOT p = f33[] parameter(0)\n}\n", "3:12",
     "unknown element type 'f33'"},
    {"negative_dimension", "HloModule m\nENTRY e {\n  ROOT p = f32[-2] parameter(0)\n}\n", "3:18",
     "dimension sizes must be non-negative"},
    {"unclosed_dimensions", "HloModule m\nENTRY e {\n  ROOT p = f32[2 parameter(0)\n}\n", "3:18",
     "expected ']' to close the dimensions"},
    {"duplicate_instruction",
     "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] negate(p)\n}\n", "4:3",
     "duplicate instruction name 'p'"},
    {"duplicate_computation",
     "HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT p = f32[] parameter(0)\n}\n",
     "5:1", "duplicate computation name 'c'"},
    {"undefined_operand",
     "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, q)\n}\n", "4:25",
     "use of undefined instruction 'q'"},
    {"cycle", "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n",
     "4:25", "'b' depends on itself through 'a' (a cycle)"},
    {"self_cycle", "HloModule m\nENTRY e {\n  ROOT a = f32[] negate(a)\n}\n", "3:25", "a cycle"},
    {"missing_computation",
     "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum\n}\n",
     "5:57", "use of undefined computation 'sum'"},
    {"bad_sharding_syntax",
     "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={devices=[2]0,1,}\n}\n",
     "3:", "bad sharding"},
    {"sharding_unknown_keyword",
     "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={replicatd}\n}\n",
     "3:", "bad sharding"},
    {"sharding_device_repeated",
     "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={devices=[2]1,1}\n}\n",
     "3:", "bad sharding"},
    {"sharding_product_mismatch",
     "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={devices=[4]0,1}\n}\n",
     "3:", "bad sharding"},
    {"sharding_rank_mismatch",
     "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={devices=[2,1]0,1}\n}\n",
     "3:8", "tiles 2 dimensions but shape f32[8] has rank 1"},
    {"sharding_device_out_of_range",
     "HloModule m, num_partitions=2\nENTRY e {\n  ROOT p = f32[8] parameter(0), "
     "sharding={devices=[2]0,5}\n}\n",
     "3:8", "uses device 5, out of range for 2 devices"},
    {"wrong_operand_shapes",
     "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n"
     "  ROOT r = f32[2] add(a, b)\n}\n",
     "5:8", "operands must have the same dimensions"},
    {"wrong_result_shape",
     "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = f32[3] negate(a)\n}\n", "4:8",
     "inferred shape f32[2] does not match declared f32[3]"},
    {"wrong_operand_count",
     "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = f32[2] add(a)\n}\n", "4:8",
     "add: expected 2 operands, got 1"},
    {"bad_literal_count", "HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n", "3:28",
     "literal has 2 elements but shape f32[3] has 3"},
    {"literal_out_of_range", "HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}\n", "3:26",
     "value 300 is out of range for s8"},
    {"unterminated_string",
     "HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"foo\n}\n",
     "3:52", "unterminated string"},
    {"bad_window", "HloModule m\nENTRY e {\n  ROOT c = f32[] parameter(0), window={sise=3}\n}\n",
     "3:40", "unknown window field 'sise'"},
    {"bad_direction",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), "
     "direction=XX\n}\n",
     "4:44", "unknown comparison direction 'XX'"},
    {"two_entries",
     "HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT p = f32[] "
     "parameter(0)\n}\n",
     "5:7", "only one ENTRY"},
    {"gte_out_of_range",
     "HloModule m\nENTRY e {\n  p = (f32[], f32[]) parameter(0)\n  ROOT g = f32[] "
     "get-tuple-element(p), index=5\n}\n",
     "4:8", "index 5 is out of range for (f32[], f32[])"},
    {"missing_parameter_number",
     "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n", "",
     "parameter"},
    // Found by mutation fuzzing: each of these crashed or hung before being rejected.
    {"recursive_call_graph",
     "HloModule m\nf {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=f\n}\n"
     "ENTRY e {\n  p0 = f32[4] parameter(0)\n  ROOT r = f32[4] call(p0), to_apply=f\n}\n",
     "", "computation %f: calls itself (%f -> %f)"},
    {"element_count_overflow",
     "HloModule m\nENTRY e {\n  ROOT p = f32[128,9223372036854775807] parameter(0)\n}\n", "3:8",
     "has more than 2^56 elements"},
    {"device_id_too_large",
     "HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0), sharding={maximal "
     "device=2147483647}\n}\n",
     "3:8", "names device 2147483647; at most 65536 devices are supported"},
    {"ragged_dot_dim_out_of_range",
     "HloModule m\nENTRY e {\n  a = f32[15,31,64] parameter(0)\n  b = f32[15,64,7] parameter(1)\n"
     "  c = u32[4] parameter(2)\n  ROOT d = f32[15,31,7] ragged-dot(a, b, c), lhs_batch_dims={0}, "
     "rhs_batch_dims={5}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, "
     "lhs_ragged_dims={0}\n}\n",
     "6:8", "ragged-dot dimension number 5 is out of range for a rank-3 operand"},
    {"sharding_annotation_changes_shape",
     "HloModule m\nENTRY e {\n  p = f32[6,16] parameter(0)\n"
     "  ROOT a = f32[6,3] custom-call(p), custom_call_target=\"Sharding\", "
     "sharding={replicated}\n}\n",
     "4:8", "custom-call \"Sharding\" returns f32[6,3] but its operand is f32[6,16]"},
    {"corrupt_proto", "\x0a\x05hello\x12\xff\xff garbage", "", "not a valid HloModuleProto"},
    // Accepted by the verifier and refused only by the executor before (issue 20).
    {"fft_length_mismatch",
     "HloModule m\nENTRY e {\n  p = c64[4,16] parameter(0)\n"
     "  ROOT f = c64[4,16] fft(p), fft_type=FFT, fft_length={8}\n}\n",
     "4:8", "fft: operand dimension 1 has size 16 but fft_length[0] is 8"},
    {"scan_dimension_out_of_range",
     "HloModule m\nbody {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n"
     "  s = f32[] add(x, c)\n  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n"
     "ENTRY e {\n  p = f32[8] parameter(0)\n  i = f32[] constant(0)\n"
     "  ROOT r = (f32[8], f32[]) scan(p, i), dimensions={3}, num_carries=1, to_apply=body\n}\n",
     "11:8", "scan: dimension 3 is out of range for input 0 f32[8]"},
    {"scan_carry_count",
     "HloModule m\nbody {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n"
     "  s = f32[] add(x, c)\n  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n"
     "ENTRY e {\n  p = f32[8] parameter(0)\n  i = f32[] constant(0)\n"
     "  ROOT r = (f32[8], f32[]) scan(p, i), dimensions={0}, num_carries=5, to_apply=body\n}\n",
     "11:8", "scan: num_carries 5 must be below the operand count 2"},
    {"scan_result_shape",
     "HloModule m\nbody {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n"
     "  s = f32[] add(x, c)\n  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n"
     "ENTRY e {\n  p = f32[8] parameter(0)\n  i = f32[] constant(0)\n"
     "  ROOT r = (f32[9], f32[]) scan(p, i), dimensions={0}, num_carries=1, to_apply=body\n}\n",
     "11:8", "inferred shape (f32[8], f32[]) does not match declared (f32[9], f32[])"},
    {"variadic_scatter_updates_differ",
     "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
     "  c = f32[] parameter(2)\n  d = f32[] parameter(3)\n  x = f32[] add(a, c)\n"
     "  y = f32[] add(b, d)\n  ROOT t = (f32[], f32[]) tuple(x, y)\n}\n"
     "ENTRY e {\n  p = f32[8,4] parameter(0)\n  q = f32[8,4] parameter(1)\n"
     "  i = s32[2,1] parameter(2)\n  u = f32[2,4] parameter(3)\n  v = f32[2,3] parameter(4)\n"
     "  ROOT s = (f32[8,4], f32[8,4]) scatter(p, q, i, u, v), update_window_dims={1}, "
     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
     "to_apply=add\n}\n",
     "17:8", "scatter: updates 1 f32[2,3] must have the dimensions of updates 0 f32[2,4]"},
    {"spmd_internal_multipad_result",
     "HloModule m\nENTRY e {\n  p = f64[15,4] parameter(0)\n  z = f64[] constant(0)\n"
     "  ROOT c = (f64[16,4], f64[17,4]) custom-call(p, z), "
     "custom_call_target=\"_SPMDInternalOp_MultiPad\", backend_config=\"dimension=0,amt=1\"\n}\n",
     "5:8", "inferred shape (f64[16,4], f64[16,4]) does not match declared (f64[16,4], f64[17,4])"},
    {"spmd_internal_rotate_dimension",
     "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n"
     "  ROOT c = f32[8] custom-call(p), custom_call_target=\"_SPMDInternalOp_RotateRight\", "
     "backend_config=\"dimension=3,amount=1\"\n}\n",
     "4:8", "_SPMDInternalOp_RotateRight: dimension 3 is outside operand f32[8]"},
    {"ragged_dot_result_shape",
     "HloModule m\nENTRY e {\n  a = f32[6,4] parameter(0)\n  b = f32[3,4,5] parameter(1)\n"
     "  g = s32[3] parameter(2)\n  ROOT d = f32[6,7] ragged-dot(a, b, g), "
     "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
     "rhs_group_dims={0}\n}\n",
     "6:8", "inferred shape f32[6,5] does not match declared f32[6,7]"},
    // An async pair's result must be what its computation returns (a fuzzer finding).
    {"async_done_shape",
     "HloModule m\nc {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
     "ENTRY e {\n  x = f32[4] parameter(0)\n"
     "  s = ((f32[4]), f32[4], s32[]) call-start(x), to_apply=c\n"
     "  ROOT d = f32[8] call-done(s)\n}\n",
     "9:8", "async-done returns f32[8] but its async-start holds the result f32[4]"},
    {"async_start_shape",
     "HloModule m\nc {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n"
     "ENTRY e {\n  x = f32[4] parameter(0)\n"
     "  s = ((f32[4]), f32[2], s32[]) call-start(x), to_apply=c\n"
     "  ROOT d = f32[2] call-done(s)\n}\n",
     "8:3", "async-start holds the result f32[2] but %c returns f32[4]"},
    // Shardy exports (issue 17): what is not understood, or contradicts sharding=, is an error.
    {"sdy_unknown_attribute",
     "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2]>}}\n"
     "ENTRY e {\n  ROOT p = f32[8] parameter(0), frontend_attributes={xla.sdy.frob=\"1\"}\n}\n",
     "3:8", "unsupported Shardy attribute 'xla.sdy.frob'"},
    {"sdy_conflicting_sharding",
     "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2]>}}\n"
     "ENTRY e {\n  ROOT p = f32[8] parameter(0), sharding={replicated}, "
     "frontend_attributes={xla.sdy.sharding=\"#sdy.sharding<@mesh, [{\\\"x\\\"}]>\"}\n}\n",
     "3:8", "disagree"},
    {"sdy_unknown_custom_call",
     "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"x\"=2]>}}\n"
     "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT c = f32[8] custom-call(p), "
     "custom_call_target=\"xla.sdy.Frob\"\n}\n",
     "4:8", "unsupported Shardy custom-call 'xla.sdy.Frob'"},
};

std::string RunCommand(const std::string& cmd, int* exit_code) {
  std::string output;
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) output.append(buf, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

class MalformedInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(MalformedInputTest, FailsWithLocatedMessage) {
  const Case& c = GetParam();
  const std::string dir = ::testing::TempDir();
  const bool proto = std::string(c.name) == "corrupt_proto";
  const std::string input = dir + "/" + c.name + (proto ? ".pb" : ".hlo");
  const std::string output = dir + "/" + c.name + ".out";
  std::ofstream(input, std::ios::binary) << c.text;
  std::filesystem::remove(output);
  int code = 0;
  std::string message =
      RunCommand("tools/spmd-partition --passes=none " + input + " -o " + output, &code);
  EXPECT_EQ(code, 1) << message;
  std::string prefix = input + ":" + c.location;
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << "expected prefix " << prefix << " in: " << message;
  EXPECT_NE(message.find("error: "), std::string::npos) << message;
  EXPECT_NE(message.find(c.message), std::string::npos) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_FALSE(std::filesystem::exists(output));
}

INSTANTIATE_TEST_SUITE_P(All, MalformedInputTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Errors whose place is not the input file (stdin, an output that cannot be written) name that
// place once, not behind the input's path as well.
TEST(MalformedInputTest, StdinAndOutputErrorsNameTheirPlaceOnce) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/stdin.hlo") << "HloModule m\nENTRY e {\n  ROOT p = f32[] frob(0)\n}\n";
  int code = 0;
  std::string message =
      RunCommand("tools/spmd-partition --passes=none - < " + dir + "/stdin.hlo", &code);
  EXPECT_EQ(code, 1) << message;
  EXPECT_EQ(message.rfind("<stdin>:3:", 0), 0u) << message;
  std::ofstream(dir + "/fine.hlo") << "HloModule g\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
  message = RunCommand("tools/spmd-partition --passes=none " + dir + "/fine.hlo -o " + dir +
                           "/no/such/dir/out.hlo",
                       &code);
  EXPECT_EQ(code, 1) << message;
  EXPECT_EQ(message.rfind(dir + "/no/such/dir/out.hlo: error: cannot write", 0), 0u) << message;
  EXPECT_EQ(message.find("error:"), message.rfind("error:")) << message;
}

// Stdin is text or a proto by its content: text that is not HLO gets the parser's message
// (StableHLO/MLIR text says what it is and how to export HLO), bytes the proto reader's.
TEST(MalformedInputTest, StdinTextAndBytesGetTheirOwnMessages) {
  const struct {
    const char* name;
    std::string contents;
    const char* prefix;
  } kInputs[] = {
      {"mlir", "module @jit_f attributes {mhlo.num_partitions = 2 : i32} {\n}\n",
       "<stdin>:1:1: error: this is StableHLO/MLIR text (it starts with 'module @jit_f"},
      {"text", "hello world\n", "<stdin>:1:1: error: expected 'HloModule', found 'hello'"},
      {"bytecode", std::string("ML\xefR\x00\x01\x02", 7),
       "<stdin>: error: this is MLIR bytecode (serialized StableHLO), not HLO; export HLO"},
      {"proto", "\x0a\x05hello\x12\xff\xff garbage", "<stdin>: error: not a valid HloModuleProto"},
  };
  for (const auto& input : kInputs) {
    const std::string path = ::testing::TempDir() + "/stdin_" + input.name;
    std::ofstream(path, std::ios::binary) << input.contents;
    int code = 0;
    const std::string message = RunCommand("tools/spmd-partition --passes=none - < " + path, &code);
    EXPECT_EQ(code, 1) << input.name << ": " << message;
    EXPECT_EQ(message.rfind(input.prefix, 0), 0u) << input.name << ": " << message;
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  }
  // A file named as a proto that holds MLIR text is named for what it is too.
  const std::string pb = ::testing::TempDir() + "/exported.pb";
  std::ofstream(pb) << "module @jit_f {\n}\n";
  int code = 0;
  const std::string message = RunCommand("tools/spmd-partition --passes=none " + pb, &code);
  EXPECT_EQ(code, 1) << message;
  EXPECT_EQ(message.rfind(pb + ": error: this is StableHLO/MLIR text", 0), 0u) << message;
}

// A pass's error names the instruction; the message carries that instruction's place.
TEST(MalformedInputTest, PassErrorsCarryTheInstructionsPosition) {
  const std::string input = ::testing::TempDir() + "/pass_error.hlo";
  std::ofstream(input) << "HloModule m, num_partitions=2\nENTRY e {\n"
                          "  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}\n"
                          "  ROOT n = f32[8] negate(x), sharding={manual}\n}\n";
  int code = 0;
  const std::string message = RunCommand("tools/spmd-partition " + input, &code);
  EXPECT_EQ(code, 1) << message;
  EXPECT_EQ(message.rfind(input + ":4:8: error: ", 0), 0u) << message;
  EXPECT_NE(message.find("instruction %n"), std::string::npos) << message;
  EXPECT_NE(message.find("SPMDFullToShardShape"), std::string::npos) << message;
}

TEST(MalformedInputTest, OtherInputsStillProcessed) {
  const std::string dir = ::testing::TempDir() + "/multi";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/good.hlo") << "HloModule g\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
  std::ofstream(dir + "/bad.hlo") << "HloModule b\nENTRY e {\n  ROOT p = f32[] frob(0)\n}\n";
  int code = 0;
  std::string message = RunCommand("tools/spmd-partition --passes=none " + dir + "/bad.hlo " + dir +
                                "/good.hlo -o " + dir + "/out",
                            &code);
  EXPECT_EQ(code, 1);
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/good.hlo"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/bad.hlo"));
  EXPECT_NE(message.find("bad.hlo:3:18: error: unknown opcode 'frob'"), std::string::npos)
      << message;
}

TEST(MalformedInputTest, UsageErrorExitsTwo) {
  int code = 0;
  RunCommand("tools/spmd-partition --passes=frobnicate x.hlo", &code);
  EXPECT_EQ(code, 2);
  RunCommand("tools/spmd-partition", &code);
  EXPECT_EQ(code, 2);
  // A device count far beyond any machine is a usage error, not an allocation of that size.
  RunCommand("tools/spmd-partition --num-partitions 100000000 x.hlo", &code);
  EXPECT_EQ(code, 2);
  // A count that is no positive number names the rule and the value, not a range of doubles.
  std::string message = RunCommand("tools/spmd-inspect --by-source x.hlo y.hlo", &code);
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("--by-source: expected a number > 0, got 'x.hlo'"), std::string::npos)
      << message;
  message = RunCommand("tools/spmd-run --rtol -1 x.hlo", &code);
  EXPECT_EQ(code, 2);
  EXPECT_NE(message.find("--rtol: expected a number >= 0, got '-1'"), std::string::npos) << message;
}

}  // namespace
