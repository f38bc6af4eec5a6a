#!/usr/bin/env python3
"""Writes a Megatron MLP stack of LAYERS layers on DEVICES devices as HLO text (for timing our
partitioner against XLA's on the same module, issue 20):

  bench/mlp_stack.py 200 8 > mlp200.hlo
  spmd-partition mlp200.hlo -o /dev/null --stats json            # our time_ms
  ../shared/tools/xla-compare/xla_partition.py mlp200.hlo 8 out --only-spmd --no-dump   # XLA's

Each layer: h = relu(x . w1) with w1 split by columns, y = h . w2 with w2 split by rows (one
all-reduce), x replicated; every weight is its own parameter.
"""
import sys


def main():
    layers, devices = int(sys.argv[1]), int(sys.argv[2])
    batch, hidden, ffn = 16, 256, 1024
    lines = [f"HloModule mlp_stack_{layers}, num_partitions={devices}", "", "ENTRY main {"]
    lines.append(f"  x0 = f32[{batch},{hidden}] parameter(0), sharding={{replicated}}")
    for i in range(layers):
        a, b = 1 + 2 * i, 2 + 2 * i
        lines.append(f"  w1_{i} = f32[{hidden},{ffn}] parameter({a}), "
                     f"sharding={{devices=[1,{devices}]<=[{devices}]}}")
        lines.append(f"  w2_{i} = f32[{ffn},{hidden}] parameter({b}), "
                     f"sharding={{devices=[{devices},1]<=[{devices}]}}")
        lines.append(f"  h_{i} = f32[{batch},{ffn}] dot(x{i}, w1_{i}), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
        lines.append(f"  z_{i} = f32[] constant(0)")
        lines.append(f"  zb_{i} = f32[{batch},{ffn}] broadcast(z_{i}), dimensions={{}}")
        lines.append(f"  r_{i} = f32[{batch},{ffn}] maximum(h_{i}, zb_{i})")
        lines.append(f"  x{i + 1} = f32[{batch},{hidden}] dot(r_{i}, w2_{i}), "
                     "lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    lines.append(f"  ROOT out = f32[{batch},{hidden}] copy(x{layers}), sharding={{replicated}}")
    lines.append("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
