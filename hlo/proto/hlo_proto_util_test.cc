// Module-level tests of the proto conversion: hand-built modules covering many opcodes and
// attributes must print identically after ToProto -> FromProto (plain, WithConfig and bytes),
// and corrupt or inconsistent protos must give InvalidArgument errors, never crashes.
#include "hlo/proto/hlo_proto_util.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/proto/test_builder.h"

namespace hlo {
namespace {

using ::hlo::testing::AddScalarAdder;
using ::hlo::testing::ComputationBuilder;
using ::hlo::testing::ExpectRoundTrip;
using ::hlo::testing::F32;
using ::hlo::testing::Pred;
using ::hlo::testing::Print;
using ::hlo::testing::S32;
using ::testing::HasSubstr;

// ---- Round trips -----------------------------------------------------------------------------

TEST(ModuleRoundTripTest, ShapeAndDataMovementOps) {
  HloModule module("data_movement");
  ComputationBuilder b("entry");
  HloInstruction* p = b.Parameter(0, "p", F32({2, 3}));
  HloInstruction* i = b.Parameter(1, "i", S32({}));
  HloInstruction* bc =
      b.Add("bc", HloOpcode::kBroadcast, F32({4, 2, 3}), {p}, [](InstructionAttributes* a) {
        a->dimensions = {1, 2};
      });
  HloInstruction* tr =
      b.Add("tr", HloOpcode::kTranspose, F32({3, 2}), {p}, [](InstructionAttributes* a) {
        a->dimensions = {1, 0};
      });
  b.Add("rs", HloOpcode::kReshape, F32({6}), {tr});
  b.Add("sl", HloOpcode::kSlice, F32({1, 2}), {p}, [](InstructionAttributes* a) {
    a->slice_dimensions = {{0, 1, 1}, {0, 3, 2}};
  });
  b.Add("ds", HloOpcode::kDynamicSlice, F32({1, 3}), {p, i, i}, [](InstructionAttributes* a) {
    a->dynamic_slice_sizes = {1, 3};
  });
  HloInstruction* zero = b.Scalar("zero", 0);
  b.Add("pad", HloOpcode::kPad, F32({5, 8}), {p, zero}, [](InstructionAttributes* a) {
    a->padding_config = PaddingConfig{{{1, 2, 0}, {0, 1, 2}}};
  });
  b.Add("iota", HloOpcode::kIota, S32({4, 5}), {},
        [](InstructionAttributes* a) { a->iota_dimension = 1; });
  b.Add("cat", HloOpcode::kConcatenate, F32({4, 3}), {p, p},
        [](InstructionAttributes* a) { a->dimensions = {0}; });
  b.Add("rev", HloOpcode::kReverse, F32({2, 3}), {p}, [](InstructionAttributes* a) {
    a->dimensions = {0, 1};
  });
  HloInstruction* cmp =
      b.Add("cmp", HloOpcode::kCompare, Pred({2, 3}), {p, p}, [](InstructionAttributes* a) {
        a->comparison_direction = ComparisonDirection::kLt;
        a->comparison_type = ComparisonType::kTotalOrder;
      });
  HloInstruction* sel = b.Add("sel", HloOpcode::kSelect, F32({2, 3}), {cmp, p, p});
  HloInstruction* tuple =
      b.Add("t", HloOpcode::kTuple, Shape::Tuple({F32({4, 2, 3}), F32({2, 3})}), {bc, sel});
  b.Add("gte", HloOpcode::kGetTupleElement, F32({2, 3}), {tuple},
        [](InstructionAttributes* a) { a->tuple_index = 1; });
  b.Finish(&module, tuple);
  module.set_entry_computation(module.computations().back().get());
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, CalledComputations) {
  HloModule module("calls");
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder cond("cond");
  HloInstruction* cp = cond.Parameter(0, "cp", F32({}));
  HloComputation* cond_c = cond.Finish(
      &module,
      cond.Add("lt", HloOpcode::kCompare, Pred({}), {cp, cp}, [](InstructionAttributes* a) {
        a->comparison_direction = ComparisonDirection::kLt;
      }));
  ComputationBuilder body("body");
  HloInstruction* bp = body.Parameter(0, "bp", F32({}));
  HloComputation* body_c = body.Finish(&module, body.Add("neg", HloOpcode::kNegate, F32({}), {bp}));
  ComputationBuilder fused("fused");
  HloInstruction* fp = fused.Parameter(0, "fp", F32({8}));
  HloComputation* fused_c = fused.Finish(&module, fused.Add("e", HloOpcode::kExp, F32({8}), {fp}));
  fused_c->set_is_fusion_computation(true);

  ComputationBuilder b("main");
  HloInstruction* v = b.Parameter(0, "v", F32({8}));
  HloInstruction* s = b.Parameter(1, "s", F32({}));
  HloInstruction* pred = b.Parameter(2, "pred", Pred({}));
  HloInstruction* index = b.Parameter(3, "index", S32({}));
  HloInstruction* zero = b.Scalar("zero", 0);
  HloInstruction* reduce = b.Add("reduce", HloOpcode::kReduce, F32({}), {v, zero},
                                 [](InstructionAttributes* a) { a->dimensions = {0}; });
  reduce->AppendCalledComputation(add);
  HloInstruction* loop = b.Add("loop", HloOpcode::kWhile, F32({}), {s});
  loop->AppendCalledComputation(cond_c);
  loop->AppendCalledComputation(body_c);
  HloInstruction* if_else = b.Add("if", HloOpcode::kConditional, F32({}), {pred, s, s});
  if_else->AppendCalledComputation(body_c);
  if_else->AppendCalledComputation(body_c);
  HloInstruction* branches = b.Add("switch", HloOpcode::kConditional, F32({}), {index, s, s, s});
  for (int k = 0; k < 3; ++k) branches->AppendCalledComputation(body_c);
  HloInstruction* call = b.Add("call", HloOpcode::kCall, F32({}), {s});
  call->AppendCalledComputation(body_c);
  HloInstruction* fusion = b.Add("fusion", HloOpcode::kFusion, F32({8}), {v},
                                 [](InstructionAttributes* a) { a->fusion_kind = "kLoop"; });
  fusion->AppendCalledComputation(fused_c);
  HloInstruction* map = b.Add("map", HloOpcode::kMap, F32({8}), {v, v},
                              [](InstructionAttributes* a) { a->dimensions = {0}; });
  map->AppendCalledComputation(add);
  HloInstruction* sort =
      b.Add("sort", HloOpcode::kSort, F32({8}), {v}, [](InstructionAttributes* a) {
        a->dimensions = {0};
        a->is_stable = true;
      });
  sort->AppendCalledComputation(cond_c);
  HloInstruction* root = b.Add(
      "out", HloOpcode::kTuple,
      Shape::Tuple({F32({}), F32({}), F32({}), F32({}), F32({}), F32({8}), F32({8}), F32({8})}),
      {reduce, loop, if_else, branches, call, fusion, map, sort});
  module.set_entry_computation(b.Finish(&module, root));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, DotConvolutionGatherScatter) {
  HloModule module("linalg");
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({4, 8, 16}));
  HloInstruction* y = b.Parameter(1, "y", F32({4, 16, 32}));
  HloInstruction* idx = b.Parameter(2, "idx", S32({5, 1}));
  b.Add("dot", HloOpcode::kDot, F32({4, 8, 32}), {x, y}, [](InstructionAttributes* a) {
    a->dot_dimension_numbers = DotDimensionNumbers{{2}, {1}, {0}, {0}};
    a->operand_precision = {Precision::kHigh, Precision::kDefault};
    a->raw_attributes.push_back({"algorithm", "dot_bf16_bf16_f32"});
  });
  b.Add("conv", HloOpcode::kConvolution, F32({4, 8, 32}), {x, y}, [](InstructionAttributes* a) {
    ConvolutionDimensionNumbers d;
    d.input_batch_dimension = 0;
    d.input_feature_dimension = 2;
    d.input_spatial_dimensions = {1};
    d.kernel_input_feature_dimension = 1;
    d.kernel_output_feature_dimension = 2;
    d.kernel_spatial_dimensions = {0};
    d.output_batch_dimension = 0;
    d.output_feature_dimension = 2;
    d.output_spatial_dimensions = {1};
    a->convolution_dimension_numbers = d;
    WindowDimension w;
    w.size = 4;
    w.stride = 2;
    w.padding_low = 1;
    w.padding_high = 2;
    w.base_dilation = 2;
    w.window_reversal = true;
    a->window = Window{{w}};
    a->feature_group_count = 2;
    a->batch_group_count = 3;
  });
  b.Add("gather", HloOpcode::kGather, F32({5, 8, 16}), {x, idx}, [](InstructionAttributes* a) {
    a->gather_dimension_numbers = GatherDimensionNumbers{{1, 2}, {0}, {0}, 1, {}, {}};
    a->gather_slice_sizes = {1, 8, 16};
    a->indices_are_sorted = true;
  });
  HloInstruction* updates = b.Parameter(3, "updates", F32({5, 8, 16}));
  HloInstruction* scatter =
      b.Add("scatter", HloOpcode::kScatter, F32({4, 8, 16}), {x, idx, updates},
            [](InstructionAttributes* a) {
              a->scatter_dimension_numbers = ScatterDimensionNumbers{{1, 2}, {0}, {0}, 1, {}, {}};
              a->unique_indices = true;
            });
  scatter->AppendCalledComputation(add);
  HloInstruction* zero = b.Scalar("zero", 0);
  HloInstruction* rw = b.Add("rw", HloOpcode::kReduceWindow, F32({4, 4, 16}), {x, zero},
                             [](InstructionAttributes* a) {
                               WindowDimension unit, two;
                               two.size = 2;
                               two.stride = 2;
                               a->window = Window{{unit, two, unit}};
                             });
  rw->AppendCalledComputation(add);
  module.set_entry_computation(b.Finish(&module, rw));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, Collectives) {
  HloModule module("collectives");
  module.mutable_config()->num_partitions = 8;
  module.mutable_config()->replica_count = 2;
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({8}));
  HloInstruction* ar =
      b.Add("ar", HloOpcode::kAllReduce, F32({8}), {x}, [](InstructionAttributes* a) {
        a->replica_groups = ReplicaGroups{{{0, 1}, {2, 3}}, std::nullopt};
        a->channel_id = 7;
        a->use_global_device_ids = true;
      });
  ar->AppendCalledComputation(add);
  b.Add("ag", HloOpcode::kAllGather, F32({32}), {x}, [](InstructionAttributes* a) {
    a->replica_groups = ReplicaGroups{{}, IotaReplicaGroupList{2, 4, {4, 2}, {1, 0}}};
    a->dimensions = {0};
    a->constrain_layout = true;
  });
  b.Add("ag2", HloOpcode::kAllGather, F32({16}), {x}, [](InstructionAttributes* a) {
    a->replica_groups = ReplicaGroups{{}, IotaReplicaGroupList{4, 2, {8}, {}}};
    a->dimensions = {0};
  });
  b.Add("empty_groups", HloOpcode::kAllToAll, F32({8}), {x}, [](InstructionAttributes* a) {
    a->replica_groups = ReplicaGroups{};
    a->channel_id = 0;  // XLA cannot say "channel 0": travels as a marker.
  });
  b.Add("cp", HloOpcode::kCollectivePermute, F32({8}), {x}, [](InstructionAttributes* a) {
    a->source_target_pairs = {{0, 1}, {1, 2}, {2, 0}};
    a->channel_id = 3;
  });
  HloInstruction* rs =
      b.Add("rs", HloOpcode::kReduceScatter, F32({4}), {x}, [](InstructionAttributes* a) {
        a->replica_groups = ReplicaGroups{{{0, 1}}, std::nullopt};
        a->dimensions = {0};
      });
  rs->AppendCalledComputation(add);
  b.Add("pid", HloOpcode::kPartitionId, Shape::ArrayWithLayout(PrimitiveType::kU32, {}));
  module.set_entry_computation(b.Finish(&module, rs));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, CustomCallsAndMiscAttributes) {
  HloModule module("misc");
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({8, 8}));
  HloInstruction* tok = b.Add("tok", HloOpcode::kAfterAll, Shape::Token());
  HloInstruction* cc =
      b.Add("cc", HloOpcode::kCustomCall, F32({8, 8}), {x}, [](InstructionAttributes* a) {
        a->custom_call_target = "my_target";
        a->custom_call_has_side_effect = true;
        a->operand_shapes_with_layout = std::vector<Shape>{F32({8, 8})};
        a->output_operand_aliasing = {{{}, 0, {}}};
        a->backend_config = "{\"key\": 1}";
        a->raw_attributes = {{"schedule", "SCHEDULE_LATEST"},
                             {"api_version", "API_VERSION_TYPED_FFI"}};
      });
  cc->AppendCalledComputation(add);
  b.Add("cc0", HloOpcode::kCustomCall, F32({}), {}, [](InstructionAttributes* a) {
    a->custom_call_target = "no_operands";
    a->operand_shapes_with_layout = std::vector<Shape>{};  // Present but empty: a marker.
    a->backend_config = "opaque \"text\"";
  });
  b.Add("rp", HloOpcode::kReducePrecision, F32({8, 8}), {x}, [](InstructionAttributes* a) {
    a->exponent_bits = 5;
    a->mantissa_bits = 10;
  });
  HloInstruction* scale = b.Parameter(1, "scale", F32({8}));
  b.Add("bn", HloOpcode::kBatchNormInference, F32({8, 8}), {x, scale, scale, scale, scale},
        [](InstructionAttributes* a) {
          a->epsilon = 0.001f;
          a->feature_index = 1;
        });
  b.Add("fft", HloOpcode::kFft, Shape::ArrayWithLayout(PrimitiveType::kC64, {8, 5}), {x},
        [](InstructionAttributes* a) {
          a->fft_type = FftType::kRfft;
          a->fft_length = {8};
        });
  HloInstruction* zero = b.Scalar("zero", 0);
  b.Add("rng", HloOpcode::kRng, F32({8}), {zero, zero},
        [](InstructionAttributes* a) { a->distribution = RandomDistribution::kNormal; });
  b.Add("topk", HloOpcode::kTopK, Shape::Tuple({F32({8, 2}), S32({8, 2})}), {x},
        [](InstructionAttributes* a) {
          a->k = 2;
          a->largest = false;
        });
  b.Add("infeed", HloOpcode::kInfeed, Shape::Tuple({F32({8}), Shape::Token()}), {tok},
        [](InstructionAttributes* a) { a->infeed_config = "cfg"; });
  b.Add("outfeed", HloOpcode::kOutfeed, Shape::Token(), {x, tok}, [](InstructionAttributes* a) {
    a->outfeed_config = "out\n";
    a->outfeed_shape = F32({8, 8});
  });
  HloInstruction* send = b.Add(
      "send", HloOpcode::kSend,
      Shape::Tuple({F32({8, 8}), Shape::ArrayWithLayout(PrimitiveType::kU32, {}), Shape::Token()}),
      {x, tok}, [](InstructionAttributes* a) {
        a->channel_id = 5;
        a->is_host_transfer = true;
      });
  HloInstruction* done = b.Add("send-done", HloOpcode::kSendDone, Shape::Token(), {send},
                               [](InstructionAttributes* a) {
                                 a->channel_id = 5;
                                 a->is_host_transfer = true;
                               });
  HloInstruction* tri =
      b.Add("tri", HloOpcode::kTriangularSolve, F32({8, 8}), {x, x}, [](InstructionAttributes* a) {
        a->raw_attributes = {{"lower", "true"}, {"transpose_a", "NO_TRANSPOSE"}};
      });
  tri->AddControlPredecessor(done);
  tri->AddControlPredecessor(cc);
  module.set_entry_computation(b.Finish(&module, tri));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, MetadataFrontendAttributesAndAsyncSugar) {
  HloModule module("annotations");
  HloComputation* add = AddScalarAdder(&module, "add");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({4}));
  HloInstruction* n = b.Add("n", HloOpcode::kNegate, F32({4}), {x}, [](InstructionAttributes* a) {
    a->metadata.op_type = "Neg";
    a->metadata.op_name = "jit(f)/neg \"quoted\"";
    a->metadata.source_file = "f.py";
    a->metadata.source_line = 12;
    a->metadata.source_end_line = 13;
    a->metadata.source_column = 4;
    a->metadata.source_end_column = 9;
    a->metadata.profile_type = {"1", "3"};
    a->metadata.deduplicated_name = "dedup";
    a->metadata.stack_frame_id = 7;
    a->metadata.scheduling_name = "sched";
    a->frontend_attributes = {{"a", "1"}, {"b", "two"}};
  });
  HloInstruction* m = b.Add("m", HloOpcode::kAbs, F32({4}), {n}, [](InstructionAttributes* a) {
    a->metadata.op_name = "wide";
    a->metadata.source_line = int64_t{1} << 40;  // Beyond int32: a marker keeps it.
    a->metadata.profile_type = {"WINDOW"};
    a->frontend_attributes = {{"z", "last"}, {"a", "first"}, {"a", "again"}};  // Unsorted.
    a->raw_attributes = {{"origin", "{{\"m\"}}"}, {"statistics", "{visualizing_index=1}"}};
  });
  HloInstruction* start = b.Add("start", HloOpcode::kAsyncStart,
                                Shape::Tuple({Shape::Tuple({F32({4})}), F32({4}), S32({})}), {m},
                                [](InstructionAttributes* a) {
                                  a->async_wrapped_opcode = HloOpcode::kCall;
                                  a->raw_attributes = {{"async_execution_thread", "\"thread_1\""}};
                                });
  start->AppendCalledComputation(add);
  HloInstruction* done =
      b.Add("done", HloOpcode::kAsyncDone, F32({4}), {start},
            [](InstructionAttributes* a) { a->async_wrapped_opcode = HloOpcode::kCall; });
  module.set_entry_computation(b.Finish(&module, done));
  module.computations().front()->set_execution_thread("thread_1");
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, ShardingsOfEveryKind) {
  HloModule module("shardings");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({8, 8}));
  x->set_sharding(HloSharding::Replicate({"op_name=\"x\""}));
  auto tiled = [&](std::string name, HloSharding sharding) {
    HloInstruction* i = b.Add(std::move(name), HloOpcode::kCopy, F32({8, 8}), {x});
    i->set_sharding(std::move(sharding));
    return i;
  };
  tiled("maximal", *HloSharding::Maximal(3));
  tiled("manual", HloSharding::Manual());
  tiled("unknown", HloSharding::Unknown());
  tiled("iota", *HloSharding::Tile(*TileAssignment::Iota({2, 4})));
  tiled("iota_t", *HloSharding::Tile(*TileAssignment::Iota({4, 2}, {2, 4}, {1, 0}),
                                     {"op_type=\"Dot\" op_name=\"a/b\" source_line=3"}));
  tiled("explicit", *HloSharding::Tile(*TileAssignment::Explicit({2, 2}, {3, 1, 2, 0})));
  tiled("partial", *HloSharding::PartialTile(*TileAssignment::Iota({2, 1, 4})));
  tiled("subgroup",
        *HloSharding::Subgroup(*TileAssignment::Iota({2, 2, 2}), {OpShardingType::kManual}));
  tiled("grouped", HloSharding::Replicate().WithShardGroup(ShardGroup::Like(4)));
  tiled("odd_metadata", HloSharding::Replicate({"op_name=\"a\"  source_line=1"}));
  HloInstruction* t =
      b.Add("t", HloOpcode::kTuple, Shape::Tuple({F32({8, 8}), F32({8, 8})}), {x, x});
  t->set_sharding(*HloSharding::Tuple(
      {HloSharding::Replicate(),
       HloSharding::Tile(*TileAssignment::Iota({2, 1}))->WithShardGroup(ShardGroup::As(0))}));
  module.set_entry_computation(b.Finish(&module, t));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, LayoutsAndLiterals) {
  HloModule module("values");
  ComputationBuilder b("entry");
  Shape tiled = F32({16, 256});
  tiled.mutable_layout()->tiles = {Tile{{8, 128}}, Tile{{2, 1}}};
  tiled.mutable_layout()->element_size_in_bits = 32;
  tiled.mutable_layout()->memory_space = 1;
  HloInstruction* x = b.Parameter(0, "x", tiled);
  Shape dynamic = Shape::Array(PrimitiveType::kBF16, {4, 10});
  dynamic.set_dynamic_dimension(1, true);
  b.Parameter(1, "d", dynamic);
  b.Parameter(2, "scalar_layout", F32({}));  // `f32[]{}`: an empty layout is still a layout.
  b.Parameter(3, "no_layout", Shape::Array(PrimitiveType::kS8, {3}));
  auto constant = [&](std::string name, PrimitiveType type, std::vector<int64_t> dims,
                      std::vector<double> values) {
    Literal literal(Shape::ArrayWithLayout(type, dims));
    for (size_t i = 0; i < values.size(); ++i) literal.SetDouble(i, values[i]);
    return b.Add(std::move(name), HloOpcode::kConstant, literal.shape(), {},
                 [&](InstructionAttributes* a) { a->literal = literal; });
  };
  constant("pred", PrimitiveType::kPred, {3}, {1, 0, 1});
  constant("s4", PrimitiveType::kS4, {3}, {-8, 7, -1});
  constant("s8", PrimitiveType::kS8, {2}, {-128, 127});
  constant("u8", PrimitiveType::kU8, {2}, {0, 255});
  constant("s16", PrimitiveType::kS16, {2}, {-30000, 1234});
  constant("u16", PrimitiveType::kU16, {2}, {65535, 1});
  constant("s32", PrimitiveType::kS32, {2, 2}, {1, -2, 3, -4});
  constant("u32", PrimitiveType::kU32, {1}, {4000000000.0});
  constant("s64", PrimitiveType::kS64, {2}, {-1e15, 1e15});
  constant("u64", PrimitiveType::kU64, {1}, {1e19});
  constant("f16", PrimitiveType::kF16, {2}, {1.5, -65504});
  constant("bf16", PrimitiveType::kBF16, {2}, {3.140625, -0.5});
  constant("f32", PrimitiveType::kF32, {3}, {0.1, -1e30, 7});
  constant("f64", PrimitiveType::kF64, {2}, {0.1, -1e300});
  constant("f8e4m3fn", PrimitiveType::kF8E4M3FN, {2}, {448, -0.5});
  constant("f8e5m2", PrimitiveType::kF8E5M2, {2}, {1.25, 57344});
  constant("f4e2m1fn", PrimitiveType::kF4E2M1FN, {2}, {6, -0.5});
  constant("empty", PrimitiveType::kF32, {0, 3}, {});
  Literal complex(Shape::ArrayWithLayout(PrimitiveType::kC64, {2}));
  complex.SetComplex(0, {1.5, -2});
  complex.SetComplex(1, {0, 3});
  b.Add("c64", HloOpcode::kConstant, complex.shape(), {},
        [&](InstructionAttributes* a) { a->literal = complex; });
  Literal tuple(Shape::Tuple({S32({2}), Shape::Tuple({F32({})})}));
  (*tuple.mutable_tuple_elements())[0].SetInt(1, 42);
  (*(*tuple.mutable_tuple_elements())[1].mutable_tuple_elements())[0].SetDouble(0, 2.5);
  b.Add("tuple_const", HloOpcode::kConstant, tuple.shape(), {},
        [&](InstructionAttributes* a) { a->literal = tuple; });
  module.set_entry_computation(b.Finish(&module, x));
  ExpectRoundTrip(module);
}

TEST(ModuleRoundTripTest, ModuleHeaderAndComputationOrder) {
  HloModule module("header");
  HloModuleConfig* config = module.mutable_config();
  config->num_partitions = 4;
  config->replica_count = 2;
  config->use_spmd_partitioning = true;
  config->allow_spmd_sharding_propagation_to_output = {true, false};
  config->allow_spmd_sharding_propagation_to_parameters = {false};
  ProgramShape layout;
  layout.parameters = {F32({2, 2})};
  layout.result = F32({2, 2});
  config->entry_computation_layout = layout;
  module.mutable_input_output_alias()->push_back({{0}, 0, {}, true});
  module.mutable_input_output_alias()->push_back({{1}, 0, {1}, false});
  *module.mutable_frontend_attributes() = {{"z", "1"}, {"b", "2"}};
  *module.mutable_raw_attributes() = {{"is_scheduled", "true"}};
  // Added in an order that is not callees-first, plus an unreachable computation.
  ComputationBuilder main("main");
  HloInstruction* p = main.Parameter(0, "p", F32({2, 2}));
  HloInstruction* call = main.Add("call", HloOpcode::kCall, F32({2, 2}), {p});
  HloComputation* entry = main.Finish(&module, call);
  ComputationBuilder unused("unused");
  unused.Finish(&module, unused.Parameter(0, "u", F32({})));
  ComputationBuilder callee("callee");
  HloInstruction* cp = callee.Parameter(0, "cp", F32({2, 2}));
  HloComputation* callee_c =
      callee.Finish(&module, callee.Add("c", HloOpcode::kCopy, F32({2, 2}), {cp}));
  call->AppendCalledComputation(callee_c);
  module.set_entry_computation(entry);
  ExpectRoundTrip(module);
  absl::StatusOr<std::unique_ptr<HloModule>> back = ParseModuleProtoBytes(SerializeModule(module));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)->config().num_partitions, 4);
  EXPECT_TRUE((*back)->config().use_spmd_partitioning);
  EXPECT_EQ((*back)->entry_computation()->name(), "main");
}

TEST(ModuleRoundTripTest, NonUniqueIdsAreRenumbered) {
  HloModule module("ids");
  ComputationBuilder b("entry");
  HloInstruction* p = b.Parameter(0, "p", F32({}));
  HloInstruction* n = b.Add("n", HloOpcode::kNegate, F32({}), {p});
  module.set_entry_computation(b.Finish(&module, n));
  n->set_unique_id(p->unique_id());
  ExpectRoundTrip(module);
}

// ---- Proto structure -------------------------------------------------------------------------

// Reads the deprecated `replica_groups` field on purpose: XLA still writes it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(ModuleToProtoTest, WritesXlaFields) {
  HloModule module("xla_fields");
  ComputationBuilder b("entry");
  HloInstruction* x = b.Parameter(0, "x", F32({8}));
  HloInstruction* ag =
      b.Add("ag", HloOpcode::kAllGather, F32({16}), {x}, [](InstructionAttributes* a) {
        a->replica_groups = ReplicaGroups{{{0, 1}, {2, 3}}, std::nullopt};
        a->dimensions = {0};
      });
  HloInstruction* iota = b.Add("iota", HloOpcode::kIota, S32({4}), {},
                               [](InstructionAttributes* a) { a->iota_dimension = 0; });
  HloInstruction* cmp =
      b.Add("cmp", HloOpcode::kCompare, Pred({8}), {x, x}, [](InstructionAttributes* a) {
        a->comparison_direction = ComparisonDirection::kGe;
        a->comparison_type = ComparisonType::kFloat;
      });
  module.set_entry_computation(
      b.Finish(&module, b.Add("t", HloOpcode::kTuple,
                              Shape::Tuple({F32({16}), S32({4}), Pred({8})}), {ag, iota, cmp})));
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  const xla::HloComputationProto& c = proto->computations(0);
  EXPECT_EQ(proto->entry_computation_name(), "entry");
  EXPECT_EQ(proto->entry_computation_id(), c.id());
  EXPECT_EQ(c.root_id(), c.instructions(4).id());
  const xla::HloInstructionProto& ag_proto = c.instructions(1);
  EXPECT_EQ(ag_proto.opcode(), "all-gather");
  EXPECT_EQ(ag_proto.id(), ag->unique_id());
  ASSERT_EQ(ag_proto.replica_groups_size(), 2);
  EXPECT_EQ(ag_proto.replica_groups(1).replica_ids(0), 2);
  EXPECT_EQ(ag_proto.collective_device_list().replica_groups_size(), 2);
  ASSERT_EQ(ag_proto.operand_ids_size(), 1);
  EXPECT_EQ(ag_proto.operand_ids(0), x->unique_id());
  EXPECT_EQ(c.instructions(2).dimensions_size(), 1);
  EXPECT_EQ(c.instructions(3).comparison_direction(), "GE");
  EXPECT_EQ(c.instructions(3).comparison_type(), "FLOAT");
  EXPECT_EQ(c.program_shape().parameters_size(), 1);
}
#pragma GCC diagnostic pop

// A tripwire (sizes on x86-64 Linux): the conversion copies these structs field by field, so a
// new field must be mapped in instruction_proto.cc / module_proto.cc (or travel as a marker),
// and then the number here updated.
TEST(ModuleToProtoTest, IrStructsHaveTheFieldsThisConversionKnows) {
  EXPECT_EQ(sizeof(InstructionAttributes), 1920u) << "InstructionAttributes changed";
  EXPECT_EQ(sizeof(HloModuleConfig), 328u) << "HloModuleConfig changed";
  EXPECT_EQ(sizeof(OpMetadata), 232u) << "OpMetadata changed";
  EXPECT_EQ(sizeof(Layout), 64u) << "Layout changed";
  EXPECT_EQ(sizeof(HloComputation), 144u) << "HloComputation changed";
}

TEST(ModuleToProtoTest, RejectsInvalidUtf8) {
  HloModule module("bad\xff");
  EXPECT_EQ(ModuleToProto(module).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SerializeModule(module), "");
}

}  // namespace
}  // namespace hlo
