#!/usr/bin/env bash
# Checks the ODR guard of the AVX GEMM builds (gemm_avx2.cc says why it matters): every symbol
# that a library's objects define for the linker must carry the library's renamed Eigen
# namespace (EigenAvx2 / EigenAvx512) in its mangled name, or be its kernel table or the
# exception-personality pointer the compiler emits in every C++ object. A symbol outside that
# set could be merged with a generic copy of the same inline function, and the linker might
# then run the AVX copy on a CPU without AVX.
#
#   gemm_isa_symbols_test.sh LIBRARY_FILE...   (the .a/.so outputs of :gemm_avx2, :gemm_avx512)
set -euo pipefail

checked=0
for lib in "$@"; do
  case "$lib" in
    *.a) ;;
    *) continue ;;  # The same objects as the archive, linked into a shared library.
  esac
  case "$lib" in
    *gemm_avx512*) namespace=EigenAvx512 table=kAvx512GemmKernels ;;
    *gemm_avx2*) namespace=EigenAvx2 table=kAvx2GemmKernels ;;
    *) echo "unexpected library $lib" >&2; exit 1 ;;
  esac
  # Defined symbols visible to the linker: global and weak, code and data.
  symbols=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }')
  if ! grep -q "$table" <<<"$symbols"; then
    echo "$lib: no $table among its symbols" >&2
    exit 1
  fi
  stray=$(grep -v -e "$namespace" -e "$table" -e '^DW\.ref\.__gxx_personality_v0$' \
    <<<"$symbols" || true)
  if [ -n "$stray" ]; then
    echo "$lib defines symbols another object file may also define:" >&2
    c++filt <<<"$stray" >&2
    exit 1
  fi
  checked=$((checked + 1))
done
if [ "$checked" -ne 2 ]; then
  echo "expected the archives of gemm_avx2 and gemm_avx512, checked $checked" >&2
  exit 1
fi
echo "PASS: $checked GEMM libraries define only their own symbols"
