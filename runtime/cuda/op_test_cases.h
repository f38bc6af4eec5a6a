// Small modules, one per op family of the CUDA executor (elementwise, compare/select/clamp/
// convert, integers, narrow and wide types, broadcast/transpose/reshape/iota,
// slices/pad/concatenate/reverse, dynamic slices, reduce, dot in three layouts and bf16,
// gather, scatter, scan, while and conditional), run against the CPU executor on the host
// device (executor_test) and on a GPU (gpu_test).
#ifndef RUNTIME_CUDA_OP_TEST_CASES_H_
#define RUNTIME_CUDA_OP_TEST_CASES_H_

#include <string>
#include <vector>

namespace runtime {
namespace cuda {

struct OpCase {
  const char* name;
  const char* body;  // Computations after the module header and the `add` reducer.
};

std::vector<OpCase> OpCases();

// The whole module text of `c`.
std::string OpCaseText(const OpCase& c);

}  // namespace cuda
}  // namespace runtime

#endif  // RUNTIME_CUDA_OP_TEST_CASES_H_
