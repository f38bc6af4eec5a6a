#!/usr/bin/env python3
"""Partitions and verifies every probe program (programs.py) with our tools and tabulates the
bytes each device receives and its FLOPs against XLA's own partitioned module (read by
spmd-inspect, like for like).

    python3 bench/jax_probe/compare.py DIR BIN_DIR [--seeds 0,1]

DIR holds programs.py's output; BIN_DIR spmd-partition, spmd-run and spmd-inspect (e.g. copied
from bazel-out/k8-opt/bin/tools). Prints one tab-separated row per file: name, our partition exit
code, verify (passes/seeds), our bytes, XLA's bytes, ratio (ours+1KiB)/(XLA+1KiB), our FLOPs,
XLA's FLOPs. Exit status 1 when a file fails to partition or verify.
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def stats(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    for line in (r.stdout + "\n" + r.stderr).splitlines():
        if line.startswith('{"module"'):
            d = json.loads(line)["per_device"]
            return r.returncode, d["comm_bytes"], d["flops"]
    return r.returncode, None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--seeds", default="0")
    a = ap.parse_args()
    seeds = [s for s in a.seeds.split(",") if s]
    rc = 0
    print("name\tpartition\tverify\tours_bytes\txla_bytes\tratio\tours_flops\txla_flops")
    for f in sorted(glob.glob(os.path.join(a.dir, "*.hlo"))):
        name = os.path.basename(f)[:-4]
        code, ours_b, ours_f = stats([os.path.join(a.bin_dir, "spmd-partition"), f, "-o",
                                      os.devnull, "--num-partitions", "8", "--stats", "json"])
        passed = 0
        for seed in seeds:
            r = subprocess.run([os.path.join(a.bin_dir, "spmd-run"), f, "--verify",
                                "--num-partitions", "8", "--seed", seed],
                               capture_output=True, text=True, timeout=600)
            passed += "verification passed" in r.stdout + r.stderr
        xla_b = xla_f = None
        xp = f[:-4] + ".xla_partitioned.txt"
        if os.path.exists(xp):
            _, xla_b, xla_f = stats([os.path.join(a.bin_dir, "spmd-inspect"), "--stats", "json",
                                     "--num-partitions", "8", xp])
        ratio = ("%.2f" % ((ours_b + 1024) / (xla_b + 1024))
                 if ours_b is not None and xla_b is not None else "-")
        if code != 0 or passed != len(seeds):
            rc = 1
        show = lambda v: "-" if v is None else str(v)
        print(f"{name}\t{code}\t{passed}/{len(seeds)}\t{show(ours_b)}\t{show(xla_b)}\t{ratio}"
              f"\t{show(ours_f)}\t{show(xla_f)}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
