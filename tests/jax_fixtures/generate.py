#!/usr/bin/env python3
"""Regenerates the JAX fixtures in tests/testdata/jax (issue 17).

    python3 tests/jax_fixtures/generate.py [--out tests/testdata/jax] [--only NAME]

Needs jax/jaxlib 0.10.2 (CPU). CI never runs this: the fixtures are committed.
Each program is lowered on 8 fake CPU devices (mesh (2,4) named ('data','model'))
twice, once with GSPMD shardings (jax_use_shardy_partitioner=False) and once with
Shardy (JAX's default), and each (program, mode) runs in its own subprocess so
that the output does not depend on what ran before (--only gives the same bytes).
Per (program, mode) it writes
  NAME.MODE.hlo       lowered.as_text(dialect="hlo")
  NAME.MODE.pb        lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()
  NAME.MODE.dump.txt  XLA's --xla_dump_to *before_optimizations.txt of the compile
and XLA's own partitioned module (*after_spmd-partitioning*.txt) of the compile:
  NAME.xla_partitioned.txt      (GSPMD mode)
  NAME.sdy.xla_partitioned.txt  (Shardy mode)
A form that cannot be produced is skipped and recorded in MANIFEST.txt.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NDEV = 8
PROGRAMS = ["train_step", "scan_layers", "collective_matmul", "moe_topk",
            "custom_partitioning", "conv_net", "embedding_grad", "host_offload",
            "shard_map_partial", "argmax_dropout"]
MODES = ["gspmd", "sdy"]

DESCRIPTIONS = {
    "train_step": "2-layer transformer train step (embedding, causal softmax attention, "
                  "GELU MLP, tied-logits cross-entropy, value_and_grad, SGD), FSDP x TP "
                  "params on ('data','model'), batch on 'data', params donated",
    "scan_layers": "4 stacked transformer layers run by lax.scan under jax.checkpoint "
                   "(dots_with_no_batch_dims_saveable), value_and_grad + SGD",
    "collective_matmul": "shard_map all-gather collective matmul: fori_loop of ppermute + "
                         "dynamic_update_slice, then psum_scatter and psum",
    "moe_topk": "top-2 MoE: router softmax, lax.top_k, take_along_axis gates, capacity "
                "one-hot dispatch/combine, 8 experts sharded on 'model' (an UNCONSTRAINED dim), grad + SGD",
    "custom_partitioning": "custom_partitioning ops: RMS-norm rule 'i j -> i j' "
                           "(need_replication j) and matmul 'i k, k j -> i j' (reduction k)",
    "conv_net": "NHWC conv net: 2 conv_general_dilated (+stride 2), max pool "
                "(reduce_window), dense, cross-entropy, grad + SGD",
    "embedding_grad": "embedding lookups (jnp.take, indexing) and their gradient "
                      "(scatter-add) with a vocab-sharded table, shard_alike, SGD update",
    "shard_map_partial": "partly manual shard_map (axis_names={'model'}; 'data' stays "
                         "automatic): psum of a dot and a tiled all_gather over 'model' in the "
                         "body, whose Shardy shardings name only the free axis",
    "argmax_dropout": "jnp.argmax / argmin along sharded axes (JAX's NaN-first, lowest-index "
                      "variadic reduce) and jax.random dropout and normal weights (threefry "
                      "counters bitcast to floats) feeding sharded values",
    "host_offload": "MLP train step with remat offload policy (save_and_offload_only_these_names) "
                    "and momentum on pinned_host (device_put inside jit); lowered for TPU",
}


# ----------------------------------------------------------------------------------------
# Programs. Each builder returns (jitted_fn, abstract_args, lowering_platforms or None).
# ----------------------------------------------------------------------------------------

def _programs():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:NDEV]).reshape(2, 4), ("data", "model"))

    def S(*spec, memory_kind=None):
        return NamedSharding(mesh, P(*spec), memory_kind=memory_kind)

    def sds(shape, dtype=jnp.float32):
        return jax.ShapeDtypeStruct(shape, dtype)

    def wsc(x, *spec):
        return jax.lax.with_sharding_constraint(x, S(*spec))

    def rms(x, g):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g

    def sgd(params, grads, lr=0.01):
        return jax.tree.map(lambda p, g: p - lr * g, params, grads)

    # A transformer block shared by train_step and scan_layers.
    def block(x, p, n_heads):
        b, t, d = x.shape
        dh = d // n_heads
        h = rms(x, p["ln1"])
        q, k, v = jnp.split(h @ p["wqkv"], 3, axis=-1)
        q, k, v = (a.reshape(b, t, n_heads, dh) for a in (q, k, v))
        q = wsc(q, "data", None, "model", None)
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(dh).astype(np.float32)
        mask = jnp.tril(jnp.ones((t, t), bool))
        s = jnp.where(mask, s, -1e9)
        a = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, t, d)
        x = x + o @ p["wo"]
        h = rms(x, p["ln2"])
        x = x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]
        return wsc(x, "data", None, None)

    def layer_specs(lead=()):
        return {"ln1": lead + (None,), "wqkv": lead + ("data", "model"),
                "wo": lead + ("model", "data"), "ln2": lead + (None,),
                "w1": lead + ("data", "model"), "w2": lead + ("model", "data")}

    def layer_shapes(d, f, lead=()):
        return {"ln1": lead + (d,), "wqkv": lead + (d, 3 * d), "wo": lead + (d, d),
                "ln2": lead + (d,), "w1": lead + (d, f), "w2": lead + (f, d)}

    def xent(logits, labels):
        lse = jax.nn.logsumexp(logits, axis=-1)
        picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
        return jnp.mean(lse - picked)

    # -- train_step ---------------------------------------------------------------------
    def train_step():
        V, D, F, H, B, T, L = 256, 64, 128, 4, 8, 16, 2
        shapes = {"embed": (V, D), "ln_f": (D,),
                  "layers": [layer_shapes(D, F) for _ in range(L)]}
        specs = {"embed": ("model", "data"), "ln_f": (None,),
                 "layers": [layer_specs() for _ in range(L)]}
        is_leaf = lambda s: isinstance(s, tuple)
        p_sh = jax.tree.map(lambda s: S(*s), specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)

        def loss_fn(params, tokens, targets):
            x = params["embed"][tokens]
            x = wsc(x, "data", None, None)
            for lp in params["layers"]:
                x = block(x, lp, H)
            logits = rms(x, params["ln_f"]) @ params["embed"].T
            return xent(logits, targets)

        def step(params, tokens, targets):
            loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
            return loss, sgd(params, grads)

        f = jax.jit(step, in_shardings=(p_sh, S("data", None), S("data", None)),
                    out_shardings=(S(), p_sh), donate_argnums=(0,))
        return f, (p_abs, sds((B, T), jnp.int32), sds((B, T), jnp.int32)), None

    # -- scan_layers --------------------------------------------------------------------
    def scan_layers():
        D, F, H, B, T, L = 64, 128, 4, 8, 16, 4
        shapes = layer_shapes(D, F, (L,))
        specs = layer_specs((None,))
        is_leaf = lambda s: isinstance(s, tuple)
        p_sh = jax.tree.map(lambda s: S(*s), specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)
        body = jax.checkpoint(lambda x, p: (block(x, p, H), None),
                              policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)

        def loss_fn(stack, x, y):
            out, _ = jax.lax.scan(body, x, stack)
            return jnp.mean((out - y) ** 2)

        def step(stack, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(stack, x, y)
            return loss, sgd(stack, grads)

        act = S("data", None, None)
        f = jax.jit(step, in_shardings=(p_sh, act, act), out_shardings=(S(), p_sh))
        return f, (p_abs, sds((B, T, D)), sds((B, T, D))), None

    # -- collective_matmul --------------------------------------------------------------
    def collective_matmul():
        B, M, K, N = 2, 32, 64, 128
        n = mesh.shape["model"]

        def local(x, w1, w2):
            # x: [1, M/n, K] (rows on 'model'); w1: [K, N/n]; w2: [N/n, K].
            idx = jax.lax.axis_index("model")
            mb = x.shape[1]
            perm = [(j, (j - 1) % n) for j in range(n)]

            def body(i, carry):
                acc, xc = carry
                part = jnp.einsum("bmk,kn->bmn", xc, w1)
                src = (idx + i) % n          # whose rows this device holds at step i
                acc = jax.lax.dynamic_update_slice_in_dim(acc, part, src * mb, axis=1)
                xc = jax.lax.ppermute(xc, "model", perm)
                return acc, xc

            acc = jnp.zeros((x.shape[0], mb * n, w1.shape[1]), x.dtype)
            acc = jax.lax.pcast(acc, ("data", "model"), to="varying")
            h, _ = jax.lax.fori_loop(0, n, body, (acc, x))   # h = all_gather(x) @ w1
            h = jax.nn.relu(h)
            y = jax.lax.psum_scatter(h @ w2, "model", scatter_dimension=1, tiled=True)
            ss = jax.lax.psum(jnp.sum(y * y), ("data", "model"))
            return y, ss

        sm = jax.shard_map(local, mesh=mesh,
                           in_specs=(P("data", "model", None), P(None, "model"), P("model", None)),
                           out_specs=(P("data", "model", None), P()))

        def f(x, w1, w2):
            y, ss = sm(x, w1, w2)
            return jnp.tanh(y) * jax.lax.rsqrt(ss + 1.0)

        j = jax.jit(f, in_shardings=(S("data", "model", None), S(None, "model"), S("model", None)),
                    out_shardings=S("data", "model", None))
        return j, (sds((B, M, K)), sds((K, N)), sds((N, K))), None

    # -- moe_topk -----------------------------------------------------------------------
    def moe_topk():
        N, D, F, E, K, C = 64, 32, 64, 8, 2, 16
        specs = {"router": (None, None), "w_in": ("model", "data", None),
                 "w_out": ("model", None, "data")}
        shapes = {"router": (D, E), "w_in": (E, D, F), "w_out": (E, F, D)}
        is_leaf = lambda s: isinstance(s, tuple)
        p_sh = jax.tree.map(lambda s: S(*s), specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)

        def moe(params, x):
            probs = jax.nn.softmax(x @ params["router"], axis=-1)         # [N, E]
            _, top_i = jax.lax.top_k(probs, K)                             # [N, K]
            gates = jnp.take_along_axis(probs, top_i, axis=-1)             # gather
            gates = gates / jnp.sum(gates, axis=-1, keepdims=True)
            mask = jax.nn.one_hot(top_i, E, dtype=jnp.int32)               # [N, K, E]
            flat = mask.transpose(1, 0, 2).reshape(K * N, E)
            pos = (jnp.cumsum(flat, axis=0) * flat - 1).reshape(K, N, E).transpose(1, 0, 2)
            keep = (mask * (pos < C)).astype(x.dtype)
            slot = jax.nn.one_hot(pos, C, dtype=x.dtype) * keep[..., None]  # [N, K, E, C]
            dispatch = jnp.sum(slot, axis=1)                               # [N, E, C]
            combine = jnp.einsum("nk,nkec->nec", gates, slot)
            xe = jnp.einsum("nd,nec->ecd", x, dispatch)
            xe = wsc(xe, "model", P.UNCONSTRAINED, None)        # open dim: {?} / unspecified_dims
            h = jax.nn.gelu(jnp.einsum("ecd,edf->ecf", xe, params["w_in"]))
            ye = jnp.einsum("ecf,efd->ecd", h, params["w_out"])
            y = jnp.einsum("ecd,nec->nd", ye, combine)
            aux = jnp.mean(jnp.sum(probs, 0) * jnp.sum(dispatch, (0, 2))) * E
            return y, aux

        def loss_fn(params, x, t):
            y, aux = moe(params, x)
            return jnp.mean((y - t) ** 2) + 0.01 * aux

        def step(params, x, t):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, t)
            return loss, sgd(params, grads)

        f = jax.jit(step, in_shardings=(p_sh, S("data", None), S("data", None)),
                    out_shardings=(S(), p_sh))
        return f, (p_abs, sds((N, D)), sds((N, D))), None

    # -- custom_partitioning ------------------------------------------------------------
    def custom_partitioning_prog():
        from jax.experimental.custom_partitioning import custom_partitioning

        def spec2(s):
            t = tuple(s.spec) if hasattr(s, "spec") else ()
            return t + (None,) * (2 - len(t))

        def norm_impl(x):
            return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)

        @custom_partitioning
        def row_norm(x):
            return norm_impl(x)

        def rows_infer(mesh_, arg_shapes, result_shape):
            return NamedSharding(mesh_, P(spec2(arg_shapes[0].sharding)[0], None))

        def rows_partition(mesh_, arg_shapes, result_shape):
            s = rows_infer(mesh_, arg_shapes, result_shape)
            return mesh_, norm_impl, s, (s,)

        row_norm.def_partition(partition=rows_partition, infer_sharding_from_operands=rows_infer,
                               sharding_rule="i j -> i j", need_replication_factors=("j",))

        @custom_partitioning
        def matmul(a, b):
            return a @ b

        def mm_infer(mesh_, arg_shapes, result_shape):
            a, b = spec2(arg_shapes[0].sharding), spec2(arg_shapes[1].sharding)
            return NamedSharding(mesh_, P(a[0], b[1]))

        def mm_partition(mesh_, arg_shapes, result_shape):
            a, b = spec2(arg_shapes[0].sharding), spec2(arg_shapes[1].sharding)
            k = a[1]

            def lower(x, y):
                r = x @ y
                return jax.lax.psum(r, k) if k is not None else r

            return (mesh_, lower, NamedSharding(mesh_, P(a[0], b[1])),
                    (NamedSharding(mesh_, P(a[0], k)), NamedSharding(mesh_, P(k, b[1]))))

        matmul.def_partition(partition=mm_partition, infer_sharding_from_operands=mm_infer,
                             sharding_rule="i k, k j -> i j", reduction_factors=("k",))

        def f(x, w1, w2):
            h = jax.nn.relu(matmul(row_norm(x), w1))
            return matmul(h, w2) + x

        j = jax.jit(f, in_shardings=(S("data", None), S(None, "model"), S("model", None)),
                    out_shardings=S("data", None))
        return j, (sds((32, 64)), sds((64, 128)), sds((128, 64))), None

    # -- conv_net -----------------------------------------------------------------------
    def conv_net():
        B, Hh, W, Cin, C1, C2, NC = 8, 16, 16, 4, 16, 32, 12
        specs = {"k1": (None, None, None, "model"), "k2": (None, None, None, "model"),
                 "dense": ("model", None)}
        shapes = {"k1": (3, 3, Cin, C1), "k2": (3, 3, C1, C2), "dense": (C2, NC)}
        is_leaf = lambda s: isinstance(s, tuple)
        p_sh = jax.tree.map(lambda s: S(*s), specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)
        dn = ("NHWC", "HWIO", "NHWC")

        def loss_fn(p, x, labels):
            h = jax.lax.conv_general_dilated(x, p["k1"], (1, 1), "SAME", dimension_numbers=dn)
            h = wsc(jax.nn.relu(h), "data", None, None, "model")
            h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
            h = jax.lax.conv_general_dilated(h, p["k2"], (2, 2), "SAME", dimension_numbers=dn)
            h = wsc(jax.nn.relu(h), "data", None, None, "model")
            logits = jnp.mean(h, axis=(1, 2)) @ p["dense"]
            return xent(logits, labels)

        def step(p, x, labels):
            loss, grads = jax.value_and_grad(loss_fn)(p, x, labels)
            return loss, sgd(p, grads)

        f = jax.jit(step, in_shardings=(p_sh, S("data", None, None, None), S("data")),
                    out_shardings=(S(), p_sh))
        return f, (p_abs, sds((B, Hh, W, Cin)), sds((B,), jnp.int32)), None

    # -- embedding_grad -----------------------------------------------------------------
    def embedding_grad():
        from jax.experimental.shard_alike import shard_alike
        V, D, T, B, D2 = 512, 64, 16, 16, 32
        specs = {"table": ("model", None), "pos": (None, None), "proj": (None, "model")}
        shapes = {"table": (V, D), "pos": (T, D), "proj": (D, D2)}
        is_leaf = lambda s: isinstance(s, tuple)
        p_sh = jax.tree.map(lambda s: S(*s), specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)

        def loss_fn(p, ids, y):
            e = jnp.take(p["table"], ids, axis=0)                 # gather
            pe = jnp.broadcast_to(p["pos"][jnp.arange(ids.shape[1])][None], e.shape)  # indexing
            e = wsc(e, "data", None, None)
            e, pe = shard_alike(e, pe)                            # sharding group
            e = e + pe
            h = jnp.tanh(e @ p["proj"])
            return jnp.mean((h - y) ** 2)

        def step(p, ids, y):
            loss, grads = jax.value_and_grad(loss_fn)(p, ids, y)   # scatter-add into table
            return loss, grads["table"], sgd(p, grads)

        f = jax.jit(step, in_shardings=(p_sh, S("data", None), S("data", None, "model")),
                    out_shardings=(S(), S("model", None), p_sh))
        return f, (p_abs, sds((B, T), jnp.int32), sds((B, T, D2))), None

    # -- host_offload -------------------------------------------------------------------
    def host_offload():
        from jax.ad_checkpoint import checkpoint_name
        B, D, F = 16, 64, 128
        w_specs = {"w1": ("data", "model"), "w2": ("model", "data")}
        shapes = {"w1": (D, F), "w2": (F, D)}
        is_leaf = lambda s: isinstance(s, tuple)
        w_sh = jax.tree.map(lambda s: S(*s), w_specs, is_leaf=is_leaf)
        m_host = jax.tree.map(lambda s: S(*s, memory_kind="pinned_host"), w_specs, is_leaf=is_leaf)
        m_dev = jax.tree.map(lambda s: S(*s, memory_kind="device"), w_specs, is_leaf=is_leaf)
        p_abs = jax.tree.map(sds, shapes, is_leaf=is_leaf)
        policy = jax.checkpoint_policies.save_and_offload_only_these_names(
            names_which_can_be_saved=[], names_which_can_be_offloaded=["h1", "h2"],
            offload_src="device", offload_dst="pinned_host")

        def mlp_block(p, x):
            h = checkpoint_name(x @ p["w1"], "h1")
            h = checkpoint_name(jnp.tanh(h) @ p["w2"], "h2")
            return jnp.tanh(h) + x

        mlp = jax.checkpoint(mlp_block, policy=policy)

        def loss_fn(p, x):
            return jnp.mean(mlp(p, mlp(p, x)) ** 2)

        def step(p, m, x):
            m = jax.device_put(m, m_dev)                     # host -> device
            loss, g = jax.value_and_grad(loss_fn)(p, x)
            m = jax.tree.map(lambda a, b: 0.9 * a + b, m, g)
            p = jax.tree.map(lambda a, b: a - 0.01 * b, p, m)
            return loss, p, jax.device_put(m, m_host)        # device -> host

        f = jax.jit(step, in_shardings=(w_sh, m_host, S("data", None)),
                    out_shardings=(S(), w_sh, m_host))
        # The CPU lowering drops device_put memory kinds inside jit (only TPU/GPU lower
        # them to annotate_device_placement), so lower for TPU, as a TPU user would.
        return f, (p_abs, p_abs, sds((B, D))), ("tpu",)

    # -- shard_map_partial --------------------------------------------------------------
    def shard_map_partial():
        def local(x, w):                                       # x [B, D/4], w [D/4, F]
            h = jax.lax.psum(x @ w, "model")                   # [B, F]
            g = jax.lax.all_gather(x, "model", axis=1, tiled=True)   # [B, D]
            return h, g * 2.0

        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=(P(), P()), axis_names={"model"}, check_vma=False)

        def f(x, w):
            h, g = sm(wsc(x, "data", "model"), w)
            return jnp.tanh(h), g

        j = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S("data", None)))
        return j, (sds((16, 64)), sds((64, 32))), None

    # -- argmax_dropout -----------------------------------------------------------------
    def argmax_dropout():
        def f(key, x):
            k1, k2 = jax.random.split(key)
            keep = jax.random.bernoulli(k1, 0.8, x.shape)
            y = jnp.where(keep, x / 0.8, 0.0)
            w = jax.random.normal(k2, (x.shape[1], 16))
            h = wsc(y, "data", "model") @ w
            return h, jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)

        j = jax.jit(f, in_shardings=(S(), S("data", "model")),
                    out_shardings=(S("data", None), S("data"), S("model")))
        return j, (jax.ShapeDtypeStruct((2,), jnp.uint32), sds((32, 64))), None

    return mesh, {
        "train_step": train_step, "scan_layers": scan_layers,
        "collective_matmul": collective_matmul, "moe_topk": moe_topk,
        "custom_partitioning": custom_partitioning_prog, "conv_net": conv_net,
        "embedding_grad": embedding_grad, "host_offload": host_offload,
        "shard_map_partial": shard_map_partial, "argmax_dropout": argmax_dropout,
    }


# ----------------------------------------------------------------------------------------
# Worker: one (program, mode) in a fresh process.
# ----------------------------------------------------------------------------------------

def _first_line(e):
    s = f"{type(e).__name__}: {e}".strip().splitlines()
    return s[0][:300] if s else type(e).__name__


def worker(name, mode, out, status_path):
    os.environ["XLA_FLAGS"] = (f"--xla_force_host_platform_device_count={NDEV} "
                               "--xla_dump_large_constants=true")
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["JAX_USE_SHARDY_PARTITIONER"] = "true" if mode == "sdy" else "false"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import jax
    import numpy as np
    jax.config.update("jax_use_shardy_partitioner", mode == "sdy")
    # Source paths in metadata / the dump's FileNames: base names only (deterministic).
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

    status = {}   # form -> "ok" | "skipped: reason"
    mesh, builders = _programs()
    f, args, platforms = builders[name]()
    base = os.path.join(out, f"{name}.{mode}")

    def write(path, data):
        with open(path, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)

    traced = f.trace(*args)
    lowered = traced.lower(lowering_platforms=platforms) if platforms else traced.lower()
    hlo_text = lowered.as_text(dialect="hlo")
    write(base + ".hlo", hlo_text)
    status["hlo"] = "ok"
    try:
        write(base + ".pb", lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())
        status["pb"] = "ok"
    except Exception as e:  # noqa: BLE001
        status["pb"] = "skipped: " + _first_line(e)

    xp_name = f"{name}.xla_partitioned.txt" if mode == "gspmd" else f"{name}.sdy.xla_partitioned.txt"
    # The driver's dump directory: if XLA aborts the process while compiling, the driver still
    # finds the status so far and the before_optimizations dump there.
    tmp = os.environ.get("JAXFX_DUMP_DIR") or tempfile.mkdtemp(prefix=f"jaxfx_{name}_{mode}_")
    status["compile"] = "crashed"
    write(status_path, json.dumps(status, sort_keys=True))
    try:
        dump = {"xla_dump_to": tmp, "xla_dump_hlo_as_text": True,
                "xla_dump_large_constants": True,
                "xla_dump_hlo_pass_re": "spmd-partitioning"}
        try:
            if platforms:
                # Lowered for another platform: compile its StableHLO on the CPU client
                # directly (lowered.compile() refuses a foreign platform).
                from jax._src.lib import xla_client as xc
                opts = xc.CompileOptions()
                opts.num_replicas, opts.num_partitions = 1, NDEV
                opts.device_assignment = xc.DeviceAssignment.create(
                    np.arange(NDEV, dtype=np.int32).reshape(1, NDEV))
                b = opts.executable_build_options
                b.use_spmd_partitioning = True
                b.use_shardy_partitioner = mode == "sdy"
                d = b.debug_options
                d.xla_dump_to = tmp
                d.xla_dump_hlo_as_text = True
                d.xla_dump_hlo_pass_re = "spmd-partitioning"
                devs = jax.devices()[:NDEV]
                devs[0].client.compile_and_load(lowered.as_text(debug_info=True), xc.DeviceList(tuple(devs)), opts)
                status["compile"] = "ok (StableHLO lowered for %s, compiled by the CPU client)" % platforms[0]
            else:
                lowered.compile(compiler_options=dump)
                status["compile"] = "ok (lowered.compile)"
        except Exception as e:  # noqa: BLE001
            status["compile"] = "failed: " + _first_line(e)
        module = hlo_text.split()[1].rstrip(",")
        before = sorted(glob.glob(os.path.join(tmp, f"*.{module}.before_optimizations.txt")))
        after = sorted(glob.glob(os.path.join(tmp, f"*.{module}.*after_spmd-partitioning*.txt")))
        if before:
            shutil.copyfile(before[0], base + ".dump.txt")
            status["dump"] = "ok"
        else:
            status["dump"] = "skipped: no before_optimizations dump (" + status["compile"] + ")"
        if after:
            shutil.copyfile(after[0], os.path.join(out, xp_name))
            status["xla_partitioned"] = "ok"
        else:
            status["xla_partitioned"] = "skipped: no after_spmd-partitioning dump (" + status["compile"] + ")"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write(status_path, json.dumps(status, sort_keys=True))


# ----------------------------------------------------------------------------------------
# Driver.
# ----------------------------------------------------------------------------------------

FORMS = [("hlo", "{n}.{m}.hlo", "HLO text, lowered.as_text(dialect='hlo')"),
         ("pb", "{n}.{m}.pb", "HloModuleProto, compiler_ir('hlo').as_serialized_hlo_module_proto()"),
         ("dump", "{n}.{m}.dump.txt", "XLA --xla_dump_to *before_optimizations.txt"),
         ("xla_partitioned", "{x}", "XLA's own *after_spmd-partitioning* dump")]


def manifest_lines(n, m, st, out):
    x = f"{n}.xla_partitioned.txt" if m == "gspmd" else f"{n}.sdy.xla_partitioned.txt"
    lines = []
    for form, pat, desc in FORMS:
        fn = pat.format(n=n, m=m, x=x)
        s = st.get(form, "not generated")
        if s == "ok" and os.path.exists(os.path.join(out, fn)):
            note = desc
            if form in ("dump", "xla_partitioned") and "compiled by" in st.get("compile", ""):
                note += "; compile " + st["compile"]
            lines.append(f"{fn}\t{n}\t{m}\t{form}\t{note}")
        else:
            lines.append(f"# ABSENT {fn}\t{n}\t{m}\t{form}\t{s}")
    return lines


def write_manifest(out, fresh):
    """fresh: {(program, mode): lines}; other programs keep their lines of the old MANIFEST."""
    path = os.path.join(out, "MANIFEST.txt")
    old = {}
    if os.path.exists(path):
        for line in open(path).read().splitlines():
            cols = line.replace("# ABSENT ", "").split("\t")
            if len(cols) == 5 and cols[1] in PROGRAMS and cols[2] in MODES:
                old.setdefault((cols[1], cols[2]), []).append(line)
    lines = ["# tests/testdata/jax, made by tests/jax_fixtures/generate.py with jax/jaxlib %s"
             % _jax_version(),
             "# 8 fake CPU devices, mesh (2,4) ('data','model'). Columns (tab-separated):",
             "# file\tprogram\tmode\tform\tnote   ('# ABSENT' lines: a form not produced, and why)",
             ""]
    for n in PROGRAMS:
        lines.append(f"## {n}: {DESCRIPTIONS[n]}")
        for m in MODES:
            lines += fresh.get((n, m)) or old.get((n, m)) or [f"# ABSENT {n}.{m}.*\t{n}\t{m}\t-\tnot generated"]
        lines.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def _jax_version():
    import importlib.metadata as md
    try:
        return md.version("jax") + "/" + md.version("jaxlib")
    except Exception:  # noqa: BLE001
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "testdata", "jax"))
    ap.add_argument("--only", action="append", choices=PROGRAMS,
                    help="regenerate only this program (repeatable)")
    ap.add_argument("--worker", nargs=3, metavar=("NAME", "MODE", "STATUS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    out = os.path.normpath(a.out)
    os.makedirs(out, exist_ok=True)
    if a.worker:
        worker(a.worker[0], a.worker[1], out, a.worker[2])
        return 0
    rc = 0
    fresh = {}
    with tempfile.TemporaryDirectory(prefix="jaxfx_") as tmp:
        for n in a.only or PROGRAMS:
            for m in MODES:
                x = f"{n}.xla_partitioned.txt" if m == "gspmd" else f"{n}.sdy.xla_partitioned.txt"
                for stale in glob.glob(os.path.join(out, f"{n}.{m}.*")) + [os.path.join(out, x)]:
                    if os.path.exists(stale):
                        os.remove(stale)
                print(f"[{n} {m}]", flush=True)
                st_path = os.path.join(tmp, f"{n}.{m}.json")
                dump_dir = os.path.join(tmp, f"{n}.{m}.dump")
                os.makedirs(dump_dir)
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--out", out,
                                    "--worker", n, m, st_path], capture_output=True, text=True,
                                   env=dict(os.environ, JAXFX_DUMP_DIR=dump_dir))
                if p.returncode != 0 and os.path.exists(st_path):
                    # XLA aborted while compiling (a CHECK): keep the exports and the dump
                    # written before it, and say why the partitioned dump is absent.
                    st = json.load(open(st_path))
                    check = [re.sub(r"^[FEWI]\d{4} [\d:.]+\s+\d+ ", "", l.strip())
                             for l in p.stderr.splitlines() if "Check failed" in l]
                    st["compile"] = "XLA aborted: " + (check[0][:200] if check else f"rc={p.returncode}")
                    before = sorted(glob.glob(os.path.join(dump_dir, "*.before_optimizations.txt")))
                    if before:
                        shutil.copyfile(before[0], os.path.join(out, f"{n}.{m}.dump.txt"))
                        st["dump"] = "ok"
                    st["xla_partitioned"] = "skipped: " + st["compile"]
                    print("  " + st["compile"], flush=True)
                elif p.returncode != 0 or not os.path.exists(st_path):
                    rc = 1
                    err = [l for l in p.stderr.splitlines()
                           if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", l)]
                    why = "worker failed: " + (err[-1][:300] if err else f"rc={p.returncode}")
                    print("  " + why, flush=True)
                    st = {"hlo": why}
                else:
                    st = json.load(open(st_path))
                for k in sorted(st):
                    print(f"  {k}: {st[k]}", flush=True)
                fresh[(n, m)] = manifest_lines(n, m, st, out)
    write_manifest(out, fresh)
    return rc


if __name__ == "__main__":
    sys.exit(main())
