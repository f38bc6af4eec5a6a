#!/usr/bin/env python3
"""JAX probe programs: small JAX programs on an 8-device (2,4) ('data','model') mesh
(batch1.py: 21, batch2.py: 17, batch3.py: 15 shard_map programs, most partly manual,
batch4.py: 6 nested shard_maps, batch5.py: 11 train-step extras, batch6.py: 8 partly manual
bodies that slice, pad, concatenate, gather, scatter, sort and convolve, batch7.py: 8 layer
patterns whose gradients write unusual HLO on split dims, batch8.py: batch7's at sizes where
bytes rather than collective latency decide, named NAME_large), exported as HLO text in
GSPMD and Shardy modes.

    python3 bench/jax_probe/programs.py --out DIR [--only NAME ...]   (needs jax==0.10.2)

Writes OUT/NAME.MODE.hlo (lowered.as_text(dialect='hlo')) and, where XLA compiles it, XLA's own
module after SPMD partitioning as OUT/NAME.MODE.xla_partitioned.txt. One subprocess per program
and mode, so an XLA abort (shmap_partial in GSPMD mode) loses only that pair's dump.
compare.py partitions, verifies and tabulates them against XLA. These programs are not fixtures:
CI never runs them (it has no JAX); tests/jax_fixtures/generate.py makes the checked-in ones.
"""
import argparse
import glob
import shutil
import tempfile
import os
import subprocess
import sys
import traceback

NDEV = 8
MODES = ["gspmd", "sdy"]
BATCHES = ["batch1", "batch2", "batch3", "batch4", "batch5", "batch6", "batch7", "batch8"]  # batchN.py: the programs, registered by define().


class Context:
    """What the batches' programs use: jax, the (2,4) ('data','model') mesh and its helpers."""

    def __init__(self):
        import jax
        import jax.numpy as jnp
        import numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        self.jax, self.jnp, self.np, self.P = jax, jnp, np, P
        self.mesh = Mesh(np.array(jax.devices()[:NDEV]).reshape(2, 4), ("data", "model"))
        self.NamedSharding = NamedSharding
        self.progs = {}

    def S(self, *spec):
        return self.NamedSharding(self.mesh, self.P(*spec))

    def sds(self, shape, dtype=None):
        return self.jax.ShapeDtypeStruct(shape, dtype or self.jnp.float32)

    def wsc(self, x, *spec):
        return self.jax.lax.with_sharding_constraint(x, self.S(*spec))

    def prog(self, fn, name=None):
        self.progs[name or fn.__name__] = fn
        return fn


def _programs():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import importlib
    c = Context()
    for batch in BATCHES:
        importlib.import_module(batch).define(c)
    return c.progs


def _program_names():
    """The programs' names without importing jax: each batch's @prog functions, or its NAMES
    when it registers programs another way."""
    import importlib
    import re
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    names = []
    for batch in BATCHES:
        listed = getattr(importlib.import_module(batch), "NAMES", None)
        src = open(os.path.join(here, batch + ".py")).read()
        names += listed if listed is not None else re.findall(r"@prog\n    def (\w+)\(", src)
    return names


def worker(mode, out, only):
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={NDEV}"
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["JAX_USE_SHARDY_PARTITIONER"] = "true" if mode == "sdy" else "false"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import jax
    jax.config.update("jax_use_shardy_partitioner", mode == "sdy")
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    progs = _programs()
    rc = 0
    for name, b in progs.items():
        if only and name not in only:
            continue
        try:
            f, args = b()
            lowered = f.trace(*args).lower()
            with open(os.path.join(out, f"{name}.{mode}.hlo"), "w") as fh:
                fh.write(lowered.as_text(dialect="hlo"))
            # Sanity: XLA compiles it; keep XLA's own module after spmd-partitioning
            # (Shardy's partitioner in sdy mode, GSPMD in gspmd mode) as NAME.MODE.xla_partitioned.txt.
            tmp = tempfile.mkdtemp(prefix=f"jaxprobe_{name}_{mode}_")
            try:
                lowered.compile(compiler_options={
                    "xla_dump_to": tmp, "xla_dump_hlo_as_text": True,
                    "xla_dump_hlo_pass_re": "spmd-partitioning|shardy-xla"})
                note = "ok"
                mod = lowered.as_text(dialect="hlo").split()[1].rstrip(",")
                after = sorted(glob.glob(os.path.join(tmp, f"*.{mod}.*after_spmd-partitioning*.txt")))
                if after:
                    shutil.copyfile(after[-1], os.path.join(out, f"{name}.{mode}.xla_partitioned.txt"))
                else:
                    note += " (no after_spmd-partitioning dump)"
            except Exception as e:  # noqa: BLE001
                note = "XLA compile failed: " + str(e).splitlines()[0][:200]
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            print(f"{name}.{mode}: {note}", flush=True)
        except Exception:  # noqa: BLE001
            rc = 1
            print(f"{name}.{mode}: LOWERING FAILED\n{traceback.format_exc()}", flush=True)
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", action="append")
    ap.add_argument("--worker")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.worker:
        return worker(a.worker, a.out, a.only)
    # One process per (program, mode): XLA's own compile may abort the process
    # (shmap_partial in GSPMD mode does), and then only that pair loses its XLA dump.
    rc = 0
    names = a.only or list(_program_names())
    for m in MODES:
        for n in names:
            cmd = [sys.executable, os.path.abspath(__file__), "--out", a.out, "--worker", m, "--only", n]
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = [l for l in r.stdout.splitlines() if l.strip()]
            print("\n".join(lines) if lines else f"{n}.{m}: (no output)", flush=True)
            if r.returncode != 0:
                crash = [l for l in r.stderr.splitlines() if "Check failed" in l or "RET_CHECK" in l or l.startswith("F0")]
                print(f"  {n}.{m}: worker exited rc={r.returncode} (XLA compile crashed?) {crash[:1]}", flush=True)
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
