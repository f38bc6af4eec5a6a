// Reading untrusted protos: every inconsistency is an InvalidArgument naming the computation
// and instruction, and corrupt bytes (random, truncated, bit-flipped) never crash.
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/proto/test_builder.h"

namespace hlo {
namespace {

using ::hlo::testing::AddScalarAdder;
using ::hlo::testing::ComputationBuilder;
using ::hlo::testing::F32;
using ::hlo::testing::Print;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// entry(p) = negate(p) then abs, plus a `add` computation called by nothing.
std::unique_ptr<HloModule> SmallModule() {
  auto module = std::make_unique<HloModule>("small");
  AddScalarAdder(module.get(), "add");
  ComputationBuilder b("entry");
  HloInstruction* p = b.Parameter(0, "p", F32({4}));
  HloInstruction* n = b.Add("n", HloOpcode::kNegate, F32({4}), {p});
  HloInstruction* a = b.Add("a", HloOpcode::kAbs, F32({4}), {n});
  module->set_entry_computation(b.Finish(module.get(), a));
  return module;
}

xla::HloModuleProto SmallProto() { return *ModuleToProto(*SmallModule()); }

// The entry computation's proto (the last one) and its instruction named `name`.
xla::HloComputationProto* Entry(xla::HloModuleProto* proto) {
  return proto->mutable_computations(proto->computations_size() - 1);
}
xla::HloInstructionProto* Instr(xla::HloModuleProto* proto, std::string_view name) {
  for (auto& instr : *Entry(proto)->mutable_instructions()) {
    if (instr.name() == name) return &instr;
  }
  return nullptr;
}

std::string ErrorOf(const xla::HloModuleProto& proto) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ModuleFromProto(proto);
  if (module.ok()) return "OK";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument) << module.status();
  return std::string(module.status().message());
}

TEST(ProtoValidationTest, UnknownOpcodeNamesTheInstruction) {
  xla::HloModuleProto proto = SmallProto();
  Instr(&proto, "n")->set_opcode("frobnicate");
  EXPECT_EQ(ErrorOf(proto), "computation %entry: instruction %n: unknown opcode \"frobnicate\"");
}

TEST(ProtoValidationTest, DanglingOperandId) {
  xla::HloModuleProto proto = SmallProto();
  Instr(&proto, "a")->set_operand_ids(0, 12345);
  EXPECT_THAT(ErrorOf(proto), HasSubstr("instruction %a: operand id 12345 is not an instruction"));
}

TEST(ProtoValidationTest, OperandCyclesAreRejected) {
  xla::HloModuleProto proto = SmallProto();
  Instr(&proto, "n")->set_operand_ids(0, Instr(&proto, "a")->id());
  EXPECT_THAT(ErrorOf(proto), HasSubstr("is part of a cycle"));
  xla::HloModuleProto self = SmallProto();
  Instr(&self, "n")->set_operand_ids(0, Instr(&self, "n")->id());
  EXPECT_THAT(ErrorOf(self), HasSubstr("instruction %n: is part of a cycle"));
}

TEST(ProtoValidationTest, ControlCyclesAreRejected) {
  xla::HloModuleProto proto = SmallProto();
  Instr(&proto, "n")->add_control_predecessor_ids(Instr(&proto, "a")->id());
  EXPECT_THAT(ErrorOf(proto), HasSubstr("is part of a cycle"));
}

TEST(ProtoValidationTest, OutOfOrderInstructionsAreSortedOperandsFirst) {
  std::unique_ptr<HloModule> module = SmallModule();
  xla::HloModuleProto proto = *ModuleToProto(*module);
  auto* instrs = Entry(&proto)->mutable_instructions();
  instrs->SwapElements(0, 2);  // a, n, p: every user before its operand.
  absl::StatusOr<std::unique_ptr<HloModule>> back = ModuleFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Print(**back), Print(*module));
}

TEST(ProtoValidationTest, BadCalledComputations) {
  xla::HloModuleProto proto = SmallProto();
  Instr(&proto, "n")->add_called_computation_ids(999);
  EXPECT_THAT(ErrorOf(proto),
              HasSubstr("instruction %n: called computation id 999 does not exist"));
  xla::HloModuleProto cycle = SmallProto();
  Instr(&cycle, "n")->add_called_computation_ids(Entry(&cycle)->id());
  EXPECT_THAT(ErrorOf(cycle), HasSubstr("computation %entry is part of a call cycle"));
  xla::HloModuleProto loop = SmallProto();
  Instr(&loop, "n")->set_opcode("while");
  Instr(&loop, "n")->add_called_computation_ids(proto.computations(0).id());
  EXPECT_THAT(ErrorOf(loop), HasSubstr("while must call 2 computations, calls 1"));
}

TEST(ProtoValidationTest, BadEnumsAndStrings) {
  auto error_with = [](const std::function<void(xla::HloInstructionProto*)>& edit) {
    xla::HloModuleProto proto = SmallProto();
    edit(Instr(&proto, "n"));
    return ErrorOf(proto);
  };
  EXPECT_THAT(error_with([](auto* i) { i->set_fft_type(static_cast<xla::FftType>(99)); }),
              HasSubstr("instruction %n: unknown fft_type 99"));
  EXPECT_THAT(
      error_with([](auto* i) { i->set_distribution(static_cast<xla::RandomDistribution>(7)); }),
      HasSubstr("unknown distribution 7"));
  EXPECT_THAT(error_with([](auto* i) {
                i->mutable_precision_config()->add_operand_precision(
                    static_cast<xla::PrecisionConfig::Precision>(5));
              }),
              HasSubstr("unknown operand precision 5"));
  EXPECT_THAT(error_with([](auto* i) { i->set_comparison_direction("XX"); }),
              HasSubstr("unknown comparison_direction \"XX\""));
  EXPECT_THAT(error_with([](auto* i) { i->set_comparison_type("WEIRD"); }),
              HasSubstr("unknown comparison_type \"WEIRD\""));
  EXPECT_THAT(error_with([](auto* i) { i->set_opcode("compare"); }),
              HasSubstr("compare has no comparison_direction"));
  EXPECT_THAT(error_with([](auto* i) {
                i->mutable_shape()->set_element_type(static_cast<xla::PrimitiveType>(99));
              }),
              HasSubstr("unsupported element type 99"));
  EXPECT_THAT(error_with([](auto* i) { i->mutable_shape()->set_element_type(xla::F6E3M2FN); }),
              HasSubstr("unsupported element type 35"));
  EXPECT_THAT(error_with([](auto* i) { i->mutable_shape()->set_dimensions(0, -4); }),
              HasSubstr("negative dimension size -4"));
  EXPECT_THAT(error_with([](auto* i) { i->mutable_shape()->add_is_dynamic_dimension(true); }),
              HasSubstr("is_dynamic_dimension has"));
  EXPECT_THAT(
      error_with([](auto* i) { i->mutable_shape()->mutable_layout()->set_minor_to_major(0, 3); }),
      HasSubstr("not a permutation"));
  EXPECT_THAT(error_with([](auto* i) { i->clear_shape(); }), HasSubstr("instruction %n: no shape"));
  EXPECT_THAT(error_with([](auto* i) { i->set_opcode("iota"); }),
              HasSubstr("iota needs exactly one dimension"));
  EXPECT_THAT(error_with([](auto* i) {
                i->mutable_sharding()->set_type(static_cast<xla::OpSharding::Type>(42));
              }),
              HasSubstr("unknown sharding type 42"));
  EXPECT_THAT(error_with([](auto* i) {
                xla::ExtraAttribute* marker = i->add_spmdp_extra_attributes();
                marker->set_name("spmdp::channel_id");
                marker->set_value("seven");
              }),
              HasSubstr("malformed spmdp::channel_id marker"));
  EXPECT_THAT(error_with([](auto* i) {
                xla::ExtraAttribute* marker = i->add_spmdp_extra_attributes();
                marker->set_name("spmdp::sharding");
                marker->set_value("7:{bogus}");
              }),
              HasSubstr("spmdp::sharding marker"));
}

TEST(ProtoValidationTest, ShardingsAndReplicaGroups) {
  auto error_with = [](const std::function<void(xla::HloInstructionProto*)>& edit) {
    xla::HloModuleProto proto = SmallProto();
    edit(Instr(&proto, "n"));
    return ErrorOf(proto);
  };
  EXPECT_THAT(error_with([](auto* i) {
                xla::OpSharding* s = i->mutable_sharding();
                s->set_type(xla::OpSharding::OTHER);
                for (int k = 0; k < 4; ++k) s->add_tile_assignment_dimensions(1 << 10);
              }),
              HasSubstr("more than 16777216 devices"));
  EXPECT_THAT(error_with([](auto* i) {
                xla::OpSharding* s = i->mutable_sharding();
                s->set_type(xla::OpSharding::OTHER);
                s->add_tile_assignment_dimensions(2);
                s->add_tile_assignment_devices(0);
                s->add_tile_assignment_devices(0);
              }),
              HasSubstr("sharding: "));
  EXPECT_THAT(
      error_with([](auto* i) { i->mutable_sharding()->set_type(xla::OpSharding::MAXIMAL); }),
      HasSubstr("maximal sharding lists 0 devices"));
  EXPECT_THAT(error_with([](auto* i) {
                xla::OpSharding* s = i->mutable_sharding();
                s->set_type(xla::OpSharding::TUPLE);
                s->add_tuple_shardings()->set_type(xla::OpSharding::TUPLE);
              }),
              HasSubstr("sharding: "));
  EXPECT_THAT(error_with([](auto* i) {
                auto* iota = i->mutable_collective_device_list()->mutable_iota_replica_group_list();
                iota->set_num_replica_groups(1 << 20);
                iota->set_num_devices_per_group(1 << 20);
                iota->add_iota_reshape_dims(int64_t{1} << 40);
              }),
              HasSubstr("larger than"));
  EXPECT_THAT(error_with([](auto* i) {
                auto* iota = i->mutable_iota_collective_device_list();
                iota->set_num_replica_groups(2);
                iota->set_num_devices_per_group(2);
                iota->add_iota_reshape_dims(4);
                iota->add_iota_transpose_perm(1);
              }),
              HasSubstr("not a permutation"));
  EXPECT_THAT(error_with([](auto* i) { i->mutable_mesh_axes_replica_group_list(); }),
              HasSubstr("mesh-axes replica groups are not supported"));
}

TEST(ProtoValidationTest, Literals) {
  xla::HloModuleProto proto = SmallProto();
  xla::HloInstructionProto* n = Instr(&proto, "n");
  n->set_opcode("constant");
  n->clear_operand_ids();
  xla::LiteralProto* literal = n->mutable_literal();
  *literal->mutable_shape() = n->shape();
  literal->add_f32s(1);
  EXPECT_THAT(ErrorOf(proto), HasSubstr("instruction %n: literal: literal of shape f32[4] needs 4 "
                                        "values but its data field holds 1"));
  literal->add_f32s(2);
  literal->add_f32s(3);
  literal->add_f32s(4);
  EXPECT_EQ(ErrorOf(proto), "OK");
  literal->mutable_shape()->set_dimensions(0, 2);
  literal->mutable_f32s()->Truncate(2);
  EXPECT_THAT(ErrorOf(proto), HasSubstr("literal shape f32[2]{0} does not match f32[4]{0}"));
  literal->clear_shape();
  EXPECT_THAT(ErrorOf(proto), HasSubstr("literal has no shape"));
}

TEST(ProtoValidationTest, NamesIdsParametersRootsAndEntry) {
  xla::HloModuleProto dup_name = SmallProto();
  Instr(&dup_name, "a")->set_name("n");
  EXPECT_THAT(ErrorOf(dup_name), HasSubstr("two instructions are named %n"));
  xla::HloModuleProto dup_id = SmallProto();
  Instr(&dup_id, "a")->set_id(Instr(&dup_id, "n")->id());
  EXPECT_THAT(ErrorOf(dup_id), HasSubstr("instruction %a reuses id"));
  xla::HloModuleProto no_name = SmallProto();
  Instr(&no_name, "a")->clear_name();
  EXPECT_THAT(ErrorOf(no_name), HasSubstr("instruction 2 has no name"));
  xla::HloModuleProto param = SmallProto();
  Instr(&param, "p")->set_parameter_number(1 << 30);
  EXPECT_THAT(ErrorOf(param), HasSubstr("parameter number 1073741824 is out of range"));
  xla::HloModuleProto root = SmallProto();
  Entry(&root)->set_root_id(424242);
  EXPECT_THAT(ErrorOf(root), HasSubstr("root_id 424242 is not an instruction"));
  xla::HloModuleProto entry = SmallProto();
  entry.set_entry_computation_name("nowhere");
  entry.set_entry_computation_id(-7);
  EXPECT_THAT(ErrorOf(entry), HasSubstr("entry computation \"nowhere\""));
  xla::HloModuleProto comp_name = SmallProto();
  comp_name.mutable_computations(0)->set_name("entry");
  EXPECT_THAT(ErrorOf(comp_name), HasSubstr("two computations are named %entry"));
  xla::HloModuleProto alias = SmallProto();
  alias.mutable_input_output_alias()->add_entries()->set_kind(static_cast<xla::Kind>(9));
  EXPECT_THAT(ErrorOf(alias), HasSubstr("unknown kind 9"));
}

// ---- Bytes -----------------------------------------------------------------------------------

std::string BigSerializedModule() {
  HloModule module("bytes");
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({8}));
  x->set_sharding(*HloSharding::Tile(*TileAssignment::Iota({4})));
  HloInstruction* c = b.Add("c", HloOpcode::kConstant, F32({8}), {}, [](InstructionAttributes* a) {
    Literal literal(F32({8}));
    for (int i = 0; i < 8; ++i) literal.SetDouble(i, i * 0.5);
    a->literal = std::move(literal);
    a->metadata.op_name = "const";
  });
  HloInstruction* ar =
      b.Add("ar", HloOpcode::kAllReduce, F32({8}), {x, c}, [](InstructionAttributes* a) {
        a->replica_groups = ReplicaGroups{{}, IotaReplicaGroupList{2, 2, {4}, {}}};
      });
  ar->AppendCalledComputation(add);
  module.set_entry_computation(b.Finish(&module, ar));
  return SerializeModule(module);
}

void ExpectCleanResult(std::string_view bytes) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseModuleProtoBytes(bytes);
  if (module.ok()) {
    Print(**module);  // Whatever was read must print without crashing.
    return;
  }
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(module.status().message()), StartsWith("not a valid HloModuleProto: "));
}

TEST(ParseModuleProtoBytesTest, ReadsBothMessageKinds) {
  std::unique_ptr<HloModule> module = SmallModule();
  module->mutable_config()->num_partitions = 8;
  absl::StatusOr<std::unique_ptr<HloModule>> from_config =
      ParseModuleProtoBytes(SerializeModule(*module));
  ASSERT_TRUE(from_config.ok()) << from_config.status();
  EXPECT_EQ(Print(**from_config), Print(*module));
  absl::StatusOr<std::unique_ptr<HloModule>> from_plain =
      ParseModuleProtoBytes(ModuleToProto(*module)->SerializeAsString());
  ASSERT_TRUE(from_plain.ok()) << from_plain.status();
  EXPECT_EQ(Print(**from_plain), Print(*module));
}

TEST(ParseModuleProtoBytesTest, EmptyAndGarbageInput) {
  EXPECT_EQ(ParseModuleProtoBytes("").status().message(),
            "not a valid HloModuleProto: the input is empty");
  EXPECT_THAT(std::string(ParseModuleProtoBytes("\xff\xff\xff\xff").status().message()),
              StartsWith("not a valid HloModuleProto: "));
}

TEST(ParseModuleProtoBytesTest, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string bytes(1 + rng() % 200, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    ExpectCleanResult(bytes);
  }
}

TEST(ParseModuleProtoBytesTest, TruncatedSerializationNeverCrashes) {
  const std::string bytes = BigSerializedModule();
  ASSERT_GT(bytes.size(), 100u);
  for (size_t length = 1; length < bytes.size(); ++length)
    ExpectCleanResult(bytes.substr(0, length));
  EXPECT_FALSE(ParseModuleProtoBytes(bytes.substr(0, bytes.size() / 2)).ok());
}

TEST(ParseModuleProtoBytesTest, BitFlipsNeverCrash) {
  const std::string bytes = BigSerializedModule();
  std::mt19937 rng(99);
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::string corrupt = bytes;
    for (int flips = 1 + rng() % 3; flips > 0; --flips) {
      corrupt[rng() % corrupt.size()] ^= static_cast<char>(1 << (rng() % 8));
    }
    ExpectCleanResult(corrupt);
  }
}

TEST(ParseModuleProtoBytesTest, ValueFuzzOfAValidProtoNeverCrashes) {
  // Field-level corruption that keeps the bytes well formed: random ids, dims and enums.
  std::mt19937 rng(7);
  const int64_t kValues[] = {-1, 0, 1, 2, 3, 7, 1 << 20, int64_t{1} << 40, INT64_MIN, INT64_MAX};
  auto pick = [&] { return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))]; };
  xla::HloModuleProtoWithConfig with_config;
  ASSERT_TRUE(with_config.ParseFromString(BigSerializedModule()));
  const xla::HloModuleProto base = with_config.hlo_module();
  for (int iteration = 0; iteration < 2000; ++iteration) {
    xla::HloModuleProto proto = base;
    xla::HloComputationProto* c = proto.mutable_computations(rng() % proto.computations_size());
    xla::HloInstructionProto* i = c->mutable_instructions(rng() % c->instructions_size());
    switch (rng() % 8) {
      case 0:
        if (i->operand_ids_size()) i->set_operand_ids(0, pick());
        break;
      case 1:
        i->mutable_shape()->add_dimensions(pick());
        break;
      case 2:
        i->set_parameter_number(pick());
        break;
      case 3:
        c->set_root_id(pick());
        break;
      case 4:
        i->mutable_sharding()->add_tile_assignment_dimensions(pick());
        break;
      case 5:
        i->mutable_literal()->mutable_shape()->add_dimensions(pick());
        break;
      case 6:
        i->add_called_computation_ids(pick());
        break;
      case 7:
        i->mutable_collective_device_list()
            ->mutable_iota_replica_group_list()
            ->set_num_replica_groups(pick());
        break;
    }
    absl::StatusOr<std::unique_ptr<HloModule>> module = ModuleFromProto(proto);
    if (module.ok()) Print(**module);
  }
}

// ---- Protos written by XLA -------------------------------------------------------------------

TEST(ForeignProtoTest, XlaOnlyFieldsBecomeAttributes) {
  xla::HloModuleProto proto;
  proto.set_name("from_xla");
  proto.set_entry_computation_name("main");
  proto.set_entry_computation_id(1);
  xla::HloComputationProto* c = proto.add_computations();
  c->set_name("main");
  c->set_id(1);
  c->set_root_id(3);
  auto shape = [](xla::HloInstructionProto* i) {
    xla::ShapeProto* s = i->mutable_shape();
    s->set_element_type(xla::F32);
    s->add_dimensions(4);
    s->add_dimensions(4);
    s->add_is_dynamic_dimension(false);
    s->add_is_dynamic_dimension(false);
    s->mutable_layout()->add_minor_to_major(1);
    s->mutable_layout()->add_minor_to_major(0);
  };
  xla::HloInstructionProto* p = c->add_instructions();
  p->set_name("p");
  p->set_opcode("parameter");
  p->set_id(2);
  shape(p);
  xla::HloInstructionProto* t = c->add_instructions();
  t->set_name("solve");
  t->set_opcode("triangular-solve");
  t->set_id(3);
  t->add_operand_ids(2);
  t->add_operand_ids(2);
  shape(t);
  t->mutable_triangular_solve_options()->set_lower(true);
  t->mutable_triangular_solve_options()->set_transpose_a(xla::TriangularSolveOptions::NO_TRANSPOSE);
  xla::HloInstructionProto* cmp = c->add_instructions();
  cmp->set_name("cmp");
  cmp->set_opcode("compare");
  cmp->set_id(4);
  cmp->add_operand_ids(2);
  cmp->add_operand_ids(3);
  shape(cmp);
  cmp->mutable_shape()->set_element_type(xla::PRED);
  cmp->set_comparison_direction("LT");
  cmp->set_comparison_type("FLOAT");  // XLA's default for f32: its printer leaves it out.
  *proto.mutable_host_program_shape()->add_parameters() = p->shape();
  *proto.mutable_host_program_shape()->mutable_result() = t->shape();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ModuleFromProto(proto);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Print(**module),
            "HloModule from_xla, entry_computation_layout={(f32[4,4]{1,0})->f32[4,4]{1,0}}\n\n"
            "ENTRY %main (p: f32[4,4]) -> f32[4,4] {\n"
            "  %p = f32[4,4]{1,0} parameter(0)\n"
            "  ROOT %solve = f32[4,4]{1,0} triangular-solve(%p, %p), lower=true, "
            "transpose_a=NO_TRANSPOSE\n"
            "  %cmp = pred[4,4]{1,0} compare(%p, %solve), direction=LT\n"
            "}\n");
  // Writing it back sets XLA's field from the verbatim attribute.
  absl::StatusOr<xla::HloModuleProto> again = ModuleToProto(**module);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->computations(0).instructions(1).triangular_solve_options().lower());
}

}  // namespace
}  // namespace hlo
