// .npy round trips for every supported type, numpy's exact header layout, reading files the
// way numpy writes them (v1.0, v2.0, big-endian, ml_dtypes' bfloat16), and the errors.
#include "runtime/cpu/npy.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using ::testing::HasSubstr;

Literal Counting(PrimitiveType type, std::vector<int64_t> dims) {
  Literal literal(Shape::Array(type, dims));
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (type == PrimitiveType::kPred) {
      literal.SetInt(i, i % 3 == 0);
    } else if (hlo::IsComplexType(type)) {
      literal.SetComplex(i, {0.5 * i, -1.0 * i});
    } else {
      literal.SetDouble(i, i % 2 ? i * 0.5 + 1 : i);
    }
  }
  return literal;
}

// A hand-built numpy file: header dict `dict` (padded by the caller) and raw data.
std::string NumpyFile(int version, std::string dict, const std::string& data) {
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) {
    out.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xff));
  }
  return out + dict + data;
}

TEST(NpyTest, RoundTripsEveryType) {
  for (PrimitiveType type :
       {PrimitiveType::kPred, PrimitiveType::kS8, PrimitiveType::kS16, PrimitiveType::kS32,
        PrimitiveType::kS64, PrimitiveType::kU8, PrimitiveType::kU16, PrimitiveType::kU32,
        PrimitiveType::kU64, PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
        PrimitiveType::kF64, PrimitiveType::kC64, PrimitiveType::kC128, PrimitiveType::kF8E4M3FN,
        PrimitiveType::kF8E5M2}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}}) {
      Literal literal = Counting(type, dims);
      absl::StatusOr<std::string> bytes = EncodeNpy(literal);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      EXPECT_EQ((bytes->size() - literal.data().size()) % 64, 0u);
      absl::StatusOr<Literal> back = DecodeNpyAs(*bytes, "x.npy", literal.shape());
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, literal) << hlo::PrimitiveTypeName(type) << " " << dims.size();
    }
  }
}

TEST(NpyTest, WritesNumpysHeader) {
  absl::StatusOr<std::string> bytes = EncodeNpy(Counting(PrimitiveType::kF32, {2, 3}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(bytes->substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ((*bytes)[127], '\n');
  EXPECT_EQ(bytes->size(), 128u + 24u);
  absl::StatusOr<std::string> vector = EncodeNpy(Counting(PrimitiveType::kU8, {7}));
  ASSERT_TRUE(vector.ok());
  EXPECT_THAT(*vector, HasSubstr("'descr': '|u1'"));
  EXPECT_THAT(*vector, HasSubstr("'shape': (7,)"));
  absl::StatusOr<std::string> bf16 = EncodeNpy(Counting(PrimitiveType::kBF16, {}));
  ASSERT_TRUE(bf16.ok());
  EXPECT_THAT(*bf16, HasSubstr("'descr': '<u2', 'fortran_order': False, 'shape': ()"));
}

TEST(NpyTest, ReadsVersion2AndBigEndian) {
  const std::string data("\x00\x00\x00\x01\x00\x00\x00\x02", 8);  // >i4 {1, 2}
  absl::StatusOr<Literal> big = DecodeNpy(
      NumpyFile(2, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data), "b.npy");
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->shape().element_type(), PrimitiveType::kS32);
  EXPECT_EQ(big->GetInt(0), 1);
  EXPECT_EQ(big->GetInt(1), 2);
}

TEST(NpyTest, ReadsMlDtypesBfloat16) {
  const std::string data("\x80\x3f\x00\xc0", 4);  // bf16 {1, -2}
  const std::string file =
      NumpyFile(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", data);
  absl::StatusOr<Literal> literal =
      DecodeNpyAs(file, "bf.npy", Shape::Array(PrimitiveType::kBF16, {2}));
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->GetDouble(0), 1.0);
  EXPECT_EQ(literal->GetDouble(1), -2.0);
}

TEST(NpyTest, Errors) {
  EXPECT_THAT(std::string(DecodeNpy("hello", "h.npy").status().message()),
              HasSubstr("h.npy: error: not a valid .npy file"));
  const std::string fortran = NumpyFile(
      1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_THAT(std::string(DecodeNpy(fortran, "f.npy").status().message()), HasSubstr("Fortran"));
  const std::string short_data = NumpyFile(
      1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(4, '\0'));
  EXPECT_THAT(std::string(DecodeNpy(short_data, "s.npy").status().message()),
              HasSubstr("needs 12 data bytes, found 4"));
  const std::string good = NumpyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                                     std::string(4, '\0'));
  EXPECT_THAT(
      std::string(
          DecodeNpyAs(good, "g.npy", Shape::Array(PrimitiveType::kS32, {1})).status().message()),
      HasSubstr("g.npy: error: expected s32[1], the file holds f32(1,)"));
  const std::string object = NumpyFile(
      1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  EXPECT_FALSE(DecodeNpy(object, "o.npy").ok());
}

}  // namespace
}  // namespace runtime
