"""JAX probe programs, batch 2: 17 programs of the second probe (2026-12-05: attention,
norm gradients, a train step, scans, uneven splits). Each program returns (jitted function, argument
shapes); programs.py exports them. Needs jax; CI never imports this file."""


def define(c):
    """Registers this batch's programs with c.prog (c: programs.Context)."""
    jax, jnp, np, P = c.jax, c.jnp, c.np, c.P
    S, sds, wsc, prog = c.S, c.sds, c.wsc, c.prog

    # 1. grouped-query attention, causal mask, bf16 softmax ------------------------------
    @prog
    def gqa_causal_bf16():
        B, T, D, HQ, HKV = 4, 32, 64, 8, 2
        dh = D // HQ
        G = HQ // HKV

        def f(x, wq, wk, wv, wo):
            q = (x @ wq).reshape(B, T, HKV, G, dh)
            k = (x @ wk).reshape(B, T, HKV, dh)
            v = (x @ wv).reshape(B, T, HKV, dh)
            s = jnp.einsum("bqhgd,bkhd->bhgqk", q, k) * jnp.bfloat16(1.0 / np.sqrt(dh))
            causal = jnp.tril(jnp.ones((T, T), dtype=bool))
            s = jnp.where(causal[None, None, None], s, jnp.finfo(jnp.bfloat16).min)
            a = jax.nn.softmax(s, axis=-1)                                   # bf16 softmax
            o = jnp.einsum("bhgqk,bkhd->bqhgd", a, v).reshape(B, T, D)
            return o @ wo
        f = jax.jit(f, in_shardings=(S("data", None, None), S(None, "model"), S(None, "model"),
                                     S(None, "model"), S("model", None)),
                    out_shardings=S("data", None, None))
        bf = jnp.bfloat16
        return f, (sds((B, T, D), bf), sds((D, D), bf), sds((D, HKV * dh), bf),
                   sds((D, HKV * dh), bf), sds((D, D), bf))

    # 2. layernorm + rmsnorm forward and backward via jax.grad -----------------------------
    @prog
    def norm_grad():
        def layernorm(x, g, b):
            mu = jnp.mean(x, -1, keepdims=True)
            var = jnp.var(x, -1, keepdims=True)
            return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

        def rmsnorm(x, g):
            return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * g

        def loss(x, g1, b1, g2):
            h = layernorm(x, g1, b1)
            h = rmsnorm(jnp.tanh(h), g2)
            return jnp.sum(h * h)

        def f(x, g1, b1, g2):
            l, grads = jax.value_and_grad(loss, argnums=(0, 1, 2, 3))(x, g1, b1, g2)
            return l, grads
        f = jax.jit(f, in_shardings=(S("data", "model", None), S(None), S(None), S(None)),
                    out_shardings=(S(), (S("data", "model", None), S(None), S(None), S(None))))
        return f, (sds((8, 16, 64)), sds((64,)), sds((64,)), sds((64,)))

    # 3. MLP train step with hand-written Adam ----------------------------------------------
    @prog
    def mlp_adam():
        B, D, H, C = 32, 32, 128, 16

        def model(p, x):
            h = jax.nn.gelu(x @ p["w1"] + p["b1"])
            return h @ p["w2"] + p["b2"]

        def loss(p, x, y):
            logits = model(p, x)
            logp = jax.nn.log_softmax(logits, -1)
            return -jnp.mean(jnp.sum(jax.nn.one_hot(y, C) * logp, -1))

        def f(p, m, v, x, y, step):
            l, g = jax.value_and_grad(loss)(p, x, y)
            b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
            m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
            v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
            t = step.astype(jnp.float32) + 1.0
            p = jax.tree_util.tree_map(
                lambda p, m, v: p - lr * (m / (1 - b1 ** t)) / (jnp.sqrt(v / (1 - b2 ** t)) + eps),
                p, m, v)
            return p, m, v, l
        ps = {"w1": S(None, "model"), "b1": S("model"), "w2": S("model", None), "b2": S(None)}
        f = jax.jit(f, in_shardings=(ps, ps, ps, S("data", None), S("data"), S()),
                    out_shardings=(ps, ps, ps, S()), donate_argnums=(0, 1, 2))
        pshape = {"w1": sds((D, H)), "b1": sds((H,)), "w2": sds((H, C)), "b2": sds((C,))}
        return f, (pshape, pshape, pshape, sds((B, D)), sds((B,), jnp.int32), sds((), jnp.int32))

    # 4. lax.scan over stacked layer weights with jax.checkpoint, + grad ----------------------
    @prog
    def scan_remat():
        L, B, D, F = 4, 16, 32, 64

        def layer(h, w):
            w1, w2 = w
            h = h + jax.nn.relu(h @ w1) @ w2
            return wsc(h, "data", None), None

        def loss(ws, x):
            h, _ = jax.lax.scan(jax.checkpoint(layer), x, ws)
            return jnp.mean(h * h)

        def f(w1s, w2s, x):
            l, g = jax.value_and_grad(loss)((w1s, w2s), x)
            return l, g
        f = jax.jit(f, in_shardings=(S(None, None, "model"), S(None, "model", None),
                                     S("data", None)),
                    out_shardings=(S(), (S(None, None, "model"), S(None, "model", None))))
        return f, (sds((L, D, F)), sds((L, F, D)), sds((B, D)))

    # 5. RNN over time via lax.scan + associative cumulative scan ----------------------------
    @prog
    def rnn_scan():
        B, T, D, H = 8, 16, 16, 32

        def f(xs, h0, wx, wh):
            def step(h, x):
                h = jnp.tanh(x @ wx + h @ wh)
                return h, h
            hT, hs = jax.lax.scan(step, h0, jnp.swapaxes(xs, 0, 1))   # hs [T,B,H]
            hs = jnp.swapaxes(hs, 0, 1)                                 # [B,T,H]
            dec = jax.lax.associative_scan(jnp.add, hs * 0.5, axis=1)   # parallel prefix
            return hT, wsc(dec, "data", None, "model")
        f = jax.jit(f, in_shardings=(S("data", None, None), S("data", None), S(None, "model"),
                                     S("model", None)),
                    out_shardings=(S("data", None), S("data", None, "model")))
        return f, (sds((B, T, D)), sds((B, H)), sds((D, H)), sds((H, H)))

    # 6. einsum with two contractions and a batch dim --------------------------------------
    @prog
    def einsum_bilinear():
        def f(x, w, y, u):
            s = jnp.einsum("bsh,hd,bsd->bs", x, w, y)
            t = jnp.einsum("bsh,bth,hk->bstk", x, y @ w.T, u)   # batch b, contract h twice
            return s, jnp.sum(t, axis=-1)
        f = jax.jit(f, in_shardings=(S("data", None, "model"), S("model", None),
                                     S("data", "model", None), S(None, None)),
                    out_shardings=(S("data", "model"), S("data", None, "model")))
        return f, (sds((4, 16, 64)), sds((64, 32)), sds((4, 16, 32)), sds((64, 8)))

    # 7. vmap of scatter-add (per-row histogram) --------------------------------------------
    @prog
    def vmap_hist():
        NB = 16

        def hist(v, w):
            b = jnp.clip((v * NB).astype(jnp.int32), 0, NB - 1)
            return jnp.zeros((NB,), jnp.float32).at[b].add(w)

        def f(v, w):
            h = jax.vmap(hist)(jax.nn.sigmoid(v), w)        # [R, NB]
            return h / (jnp.sum(h, -1, keepdims=True) + 1e-6)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=S("data", None))
        return f, (sds((32, 64)), sds((32, 64)))

    # 8. argsort + take_along_axis; cumsum(reverse=True) and diff ----------------------------
    @prog
    def argsort_cumsum():
        def f(x, y):
            i = jnp.argsort(x, axis=-1)                     # last axis sharded on model
            ys = jnp.take_along_axis(y, i, axis=-1)
            rc = jax.lax.cumsum(ys, axis=1, reverse=True)   # jnp.cumsum lacks reverse= in 0.10.2
            d = jnp.diff(x, axis=0)                         # [31,64] along data axis
            d2 = jnp.diff(rc, n=2, axis=1, prepend=0.0, append=0.0)
            return rc, wsc(d, "data", "model") * 2.0, d2   # d: 31 over 2 (intermediate)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S(None, "model"), S("data", None)))
        return f, (sds((32, 64)), sds((32, 64)))

    # 9. conv_transpose + depthwise conv ---------------------------------------------------
    @prog
    def convt_depthwise():
        dn = ("NHWC", "HWIO", "NHWC")
        C = 16

        def f(x, kd, kt):
            h = jax.lax.conv_general_dilated(x, kd, (1, 1), "SAME", dimension_numbers=dn,
                                             feature_group_count=C)           # depthwise
            h = jax.nn.silu(h)
            up = jax.lax.conv_transpose(h, kt, (2, 2), "SAME", dimension_numbers=dn)
            return wsc(up, "data", "model", None, None)
        f = jax.jit(f, in_shardings=(S("data", "model", None, None), S(None, None, None, "model"),
                                     S()),
                    out_shardings=S("data", "model", None, None))
        return f, (sds((2, 16, 16, C)), sds((3, 3, 1, C)), sds((3, 3, C, 8)))

    # 10. KV cache written per step into a sequence-sharded cache (fori_loop + DUS) -----------
    @prog
    def kv_seq_sharded():
        B, T, D, STEPS = 4, 32, 32, 6

        def f(cache, x, pos0, w):
            pos0 = jnp.abs(pos0) % (T - STEPS)

            def body(i, c):
                cache, x = c
                k = jnp.tanh(x @ w)                                     # [B,D]
                cache = jax.lax.dynamic_update_slice(cache, k[:, None, :], (0, pos0 + i, 0))
                att = jax.nn.softmax(jnp.einsum("bd,btd->bt", x, cache), -1)
                x = x + jnp.einsum("bt,btd->bd", att, cache)
                return cache, x
            return jax.lax.fori_loop(0, STEPS, body, (cache, x))
        f = jax.jit(f, in_shardings=(S("data", "model", None), S("data", None), S(), S(None, "model")),
                    out_shardings=(S("data", "model", None), S("data", None)),
                    donate_argnums=(0,))
        return f, (sds((B, T, D)), sds((B, D)), sds((), jnp.int32), sds((D, D)))

    # 11. shard_map collective matmul: all-gather via ppermute ring over 'model' -------------
    @prog
    def shmap_ring_matmul():
        n = 4

        def local(x, w):     # x [M/4, K] rows sharded on model; w [K, N/4]
            perm = [(j, (j + 1) % n) for j in range(n)]
            idx = jax.lax.axis_index("model")
            m = x.shape[0]
            out = jnp.zeros((m * n, w.shape[1]), x.dtype)
            chunk = x
            for s in range(n):
                src = (idx - s) % n
                out = jax.lax.dynamic_update_slice(out, chunk @ w, (src * m, 0))
                if s < n - 1:
                    chunk = jax.lax.ppermute(chunk, "model", perm)
            return out
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("model", None), P(None, "model")),
                           out_specs=P(None, "model"), check_vma=False)

        def f(x, w):
            return jax.nn.relu(sm(x, w))
        f = jax.jit(f, in_shardings=(S("model", None), S(None, "model")),
                    out_shardings=S(None, "model"))
        return f, (sds((32, 64)), sds((64, 32)))

    # 12. norms / max with keepdims, broadcast back; jnp.where NaN handling + nan_to_num -----
    @prog
    def norm_nan():
        def f(x, y):
            n = jnp.linalg.norm(x, axis=1, keepdims=True)          # model-sharded axis
            m = jnp.max(x, axis=0, keepdims=True)                   # data-sharded axis
            z = x / n - m
            fro = jnp.linalg.norm(x)
            r = jnp.where(y > 0, jnp.log(y), jnp.nan)
            r = jnp.where(jnp.isnan(r), 0.0, r) + jnp.nan_to_num(y / (y - 0.5), nan=0.0,
                                                                 posinf=1e3, neginf=-1e3)
            mx = jnp.nanmax(jnp.where(y > 1.0, jnp.nan, y), axis=1, keepdims=True)
            return z * fro, r - mx
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S("model", "data")))
        return f, (sds((32, 64)), sds((32, 64)))

    # 13. embedding lookup with a sharded table, and its gradient ----------------------------
    @prog
    def embed_grad():
        V, D, B, T = 64, 32, 8, 8

        def loss(table, ids, w):
            e = jnp.take(table, ids, axis=0)                       # [B,T,D]
            return jnp.mean((e @ w) ** 2)

        def f(table, ids, w):
            ids = jnp.abs(ids) % V
            l, (gt, gw) = jax.value_and_grad(loss, argnums=(0, 2))(table, ids, w)
            return l, gt, gw
        f = jax.jit(f, in_shardings=(S("model", None), S("data", None), S(None, "model")),
                    out_shardings=(S(), S("model", None), S(None, "model")))
        return f, (sds((V, D)), sds((B, T), jnp.int32), sds((D, 16)))

    # 14. one_hot + matmul (vocab-sharded) with a cross-entropy --------------------------------
    @prog
    def onehot_matmul():
        V, D, N = 128, 32, 64

        def f(ids, table, labels, wout):
            oh = jax.nn.one_hot(jnp.abs(ids) % V, V, dtype=jnp.float32)   # [N,V]
            oh = wsc(oh, "data", "model")
            e = oh @ table                                               # contract V on model
            logits = e @ wout                                            # [N,V]
            lse = jax.nn.logsumexp(logits, -1)
            tgt = jnp.sum(logits * jax.nn.one_hot(jnp.abs(labels) % V, V), -1)
            return jnp.mean(lse - tgt), e
        f = jax.jit(f, in_shardings=(S("data"), S("model", None), S("data"), S(None, "model")),
                    out_shardings=(S(), S("data", None)))
        return f, (sds((N,), jnp.int32), sds((V, D)), sds((N,), jnp.int32), sds((D, V)))

    # 15. int8 per-channel quantize / dequantize + int8 matmul ---------------------------------
    @prog
    def int8_quant():
        def quant(w, axis):
            s = jnp.max(jnp.abs(w), axis=axis, keepdims=True) / 127.0 + 1e-8
            q = jnp.clip(jnp.round(w / s), -127, 127).astype(jnp.int8)
            return q, s

        def f(x, w):
            qx, sx = quant(x, 1)                  # per-row (row sharded on data)
            qw, sw = quant(w, 0)                  # per-column (contracting axis sharded)
            acc = jax.lax.dot_general(qx, qw, (((1,), (0,)), ((), ())),
                                      preferred_element_type=jnp.int32)
            y = acc.astype(jnp.float32) * sx * sw
            err = jnp.mean(jnp.abs(qw.astype(jnp.float32) * sw - w))
            return y, err
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S()))
        return f, (sds((32, 64)), sds((64, 48)))

    # 16. uneven shapes: dims 6, 10, 30 sharded over 4 ----------------------------------------
    @prog
    def uneven_6_10_30():
        def f(x, w, b):          # x [6,10,30], w [30,10], b [10]
            x = wsc(jnp.sin(x), None, None, "model")                # 30 over 4
            h = jnp.einsum("abc,cd->abd", x, w) + b                 # [6,10,10]
            h = wsc(h, "model", None, "data")                       # 6 over 4
            s = jax.nn.softmax(h, axis=1)
            t = jnp.transpose(s, (2, 0, 1)).reshape(10, 60)
            t = wsc(t, "model", None)                               # 10 over 4
            return jnp.cumsum(t, axis=0), jnp.sum(x, axis=(0, 1))
        # jit in/out shardings must divide evenly; uneven ones are intermediate (wsc) only
        f = jax.jit(f, in_shardings=(S(None, None, "data"), S("data", None), S()),
                    out_shardings=(S(None, "model"), S()))
        return f, (sds((6, 10, 30)), sds((30, 10)), sds((10,)))

    # 17. vmap'd dynamic_slice gather windows + segment-wise max (uneven 10 over 4) -----------
    @prog
    def vmap_dynslice():
        def f(x, starts):
            x = wsc(x, "model", None)                                # 10 over 4
            starts = jnp.abs(starts) % (x.shape[1] - 8)
            win = jax.vmap(lambda r, s: jax.lax.dynamic_slice(r, (s,), (8,)))(x, starts)  # [R,8]
            return win, jnp.max(win, axis=1, keepdims=True) - x[:, :1]
        f = jax.jit(f, in_shardings=(S(None, "data"), S()),
                    out_shardings=(S(), S(None, None)))
        return f, (sds((10, 40)), sds((10,), jnp.int32))

