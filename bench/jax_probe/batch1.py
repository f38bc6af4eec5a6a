"""JAX probe programs, batch 1: the 21 programs of the first probe (2026-12-05). Each program returns (jitted function, argument
shapes); programs.py exports them. Needs jax; CI never imports this file."""


def define(c):
    """Registers this batch's programs with c.prog (c: programs.Context)."""
    jax, jnp, np, P = c.jax, c.jnp, c.np, c.P
    S, sds, wsc, prog = c.S, c.sds, c.wsc, c.prog

    # 1. layernorm + attention with padding mask and rotary embeddings ------------------
    @prog
    def attn_rope():
        B, T, D, H = 8, 32, 64, 4
        dh = D // H

        def layernorm(x, g, b):
            mu = jnp.mean(x, -1, keepdims=True)
            var = jnp.mean((x - mu) ** 2, -1, keepdims=True)
            return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b

        def rope(x):  # x [B,T,H,dh]
            half = dh // 2
            freq = 1.0 / (10000 ** (jnp.arange(half, dtype=jnp.float32) / half))
            ang = jnp.arange(T, dtype=jnp.float32)[:, None] * freq[None]
            c, s = jnp.cos(ang)[None, :, None], jnp.sin(ang)[None, :, None]
            x1, x2 = x[..., :half], x[..., half:]
            return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

        def f(x, lens, g, b, wq, wk, wv, wo):
            h = layernorm(x, g, b)
            q = (h @ wq).reshape(B, T, H, dh)
            k = (h @ wk).reshape(B, T, H, dh)
            v = (h @ wv).reshape(B, T, H, dh)
            q, k = rope(q), rope(k)
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(dh))
            pad = jnp.arange(T)[None, :] < (jnp.abs(lens) % T + 1)[:, None]   # [B,T]
            s = jnp.where(pad[:, None, None, :], s, -1e9)
            a = jax.nn.softmax(s, axis=-1)
            o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, D)
            return x + o @ wo

        f = jax.jit(f, in_shardings=(S("data", None, None), S("data"), S(None), S(None),
                                     S(None, "model"), S(None, "model"), S(None, "model"),
                                     S("model", None)),
                    out_shardings=S("data", "model", None))
        return f, (sds((B, T, D)), sds((B,), jnp.int32), sds((D,)), sds((D,)),
                   sds((D, D)), sds((D, D)), sds((D, D)), sds((D, D)))

    # 2. cumsum / cumprod / cummax along sharded axes (reduce-window) --------------------
    @prog
    def cumulative():
        def f(x, y):
            a = jnp.cumsum(x, axis=1)                # axis 1 sharded on model
            b = jnp.cumprod(1.0 + 0.01 * x, axis=0)  # axis 0 sharded on data
            c = jax.lax.cummax(y, axis=1)
            d = jnp.cumsum(y.astype(jnp.int32), axis=0, dtype=jnp.int32)
            return a + b, c, d
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S(None, "model"), S("data", None)))
        return f, (sds((16, 64)), sds((16, 64)))

    # 3. argmax / argmin (variadic reduce) along sharded axes ------------------------------
    @prog
    def argminmax():
        def f(x):
            i1 = jnp.argmax(x, axis=1)               # model-sharded axis
            i0 = jnp.argmin(x, axis=0)               # data-sharded axis
            v2 = jnp.max(x, axis=2)
            i2 = jnp.argmax(x, axis=2)
            return i1, i0, v2, i2
        f = jax.jit(f, in_shardings=(S("data", "model", None),),
                    out_shardings=(S("data", None), S("model", None), S("data", "model"),
                                   S("data", "model")))
        return f, (sds((16, 64, 32)),)

    # 4. sort / argsort along sharded axes ------------------------------------------------
    @prog
    def sort_argsort():
        def f(x, y):
            s = jnp.sort(x, axis=1)                  # sorted along model-sharded axis
            i = jnp.argsort(x, axis=0)               # along data-sharded axis
            k, v = jax.lax.sort((y, x), dimension=1, num_keys=1)  # key-value sort
            return s, i, k, v
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S(None, "model"), S("data", None),
                                   S("data", "model")))
        return f, (sds((32, 64)), sds((32, 64)))

    # 5. lax.top_k + take_along_axis on sharded axes --------------------------------------
    @prog
    def topk_gather():
        def f(x, w):
            v, i = jax.lax.top_k(x, 8)               # last axis sharded on model
            g = jnp.take_along_axis(w, i, axis=1)
            idx0 = jnp.argsort(x[:, :4], axis=0)     # [32,4] indices into axis 0
            h = jnp.take_along_axis(w[:, :4], idx0, axis=0)  # gather along data-sharded axis
            return v * g, h
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", None), S(None, None)))
        return f, (sds((32, 128)), sds((32, 128)))

    # 6. one_hot + segment_sum (scatter-add) with sharded segments --------------------------
    @prog
    def segment_sum():
        NS = 32

        def f(x, seg, labels, w):
            seg = jnp.abs(seg) % NS
            s = jax.ops.segment_sum(x, seg, num_segments=NS)          # scatter-add
            m = jax.ops.segment_max(x, seg, num_segments=NS)
            m = jnp.where(jnp.isfinite(m), m, 0.0)
            oh = jax.nn.one_hot(jnp.abs(labels) % 16, 16, dtype=x.dtype)  # [N,16]
            cnt = oh.T @ x                                              # [16,D]
            return wsc(s, "model", None), m, cnt @ w
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data"), S("data"), S("model", None)),
                    out_shardings=(S("model", None), S(None, "model"), S(None, None)))
        return f, (sds((128, 32)), sds((128,), jnp.int32), sds((128,), jnp.int32), sds((32, 16)))

    # 7. KV-cache decode step: dynamic_update_slice inside fori_loop -----------------------
    @prog
    def kv_decode():
        B, T, H, dh, D, STEPS = 8, 32, 4, 16, 64, 4

        def f(kc, vc, x, pos0, wq, wk, wv, wo):
            pos0 = jnp.abs(pos0) % (T - STEPS)

            def body(i, carry):
                kc, vc, x = carry
                p = pos0 + i
                q = (x @ wq).reshape(B, 1, H, dh)
                k = (x @ wk).reshape(B, 1, H, dh)
                v = (x @ wv).reshape(B, 1, H, dh)
                kc = jax.lax.dynamic_update_slice(kc, k, (0, p, 0, 0))
                vc = jax.lax.dynamic_update_slice(vc, v, (0, p, 0, 0))
                s = jnp.einsum("bqhd,bkhd->bhqk", q, kc) / 4.0
                s = jnp.where(jnp.arange(T)[None, None, None, :] <= p, s, -1e9)
                a = jax.nn.softmax(s, -1)
                o = jnp.einsum("bhqk,bkhd->bqhd", a, vc).reshape(B, D)
                x = jnp.tanh(x + o @ wo)
                return kc, vc, x

            return jax.lax.fori_loop(0, STEPS, body, (kc, vc, x))
        cs = S("data", None, "model", None)
        f = jax.jit(f, in_shardings=(cs, cs, S("data", None), S(), S(None, "model"),
                                     S(None, "model"), S(None, "model"), S("model", None)),
                    out_shardings=(cs, cs, S("data", None)), donate_argnums=(0, 1))
        return f, (sds((B, T, H, dh)), sds((B, T, H, dh)), sds((B, D)), sds((), jnp.int32),
                   sds((D, D)), sds((D, D)), sds((D, D)), sds((D, D)))

    # 8. lax.cond / lax.switch with sharded operands ----------------------------------------
    @prog
    def cond_switch():
        def f(x, w, sel):
            pred = jnp.sum(x) > 0
            y = jax.lax.cond(pred, lambda a, b: jnp.tanh(a @ b),
                             lambda a, b: jax.nn.relu(a) @ (b * 2.0), x, w)
            z = jax.lax.switch(jnp.abs(sel) % 3,
                               [lambda a: a * 2.0, lambda a: jnp.sin(a),
                                lambda a: wsc(a.T, "model", "data").T + 1.0], y)
            return z
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None), S()),
                    out_shardings=S(None, "model"))
        return f, (sds((32, 64)), sds((64, 64)), sds((), jnp.int32))

    # 9. strided / dilated / grouped / transposed convs + pooling, spatial dims sharded ----
    @prog
    def conv_variants():
        dn = ("NHWC", "HWIO", "NHWC")

        def f(x, k1, k2, k3, k4):
            h = jax.lax.conv_general_dilated(x, k1, (2, 2), "SAME", dimension_numbers=dn)
            h = jax.nn.relu(h)                                                # [2,16,16,16]
            h = jax.lax.conv_general_dilated(h, k2, (1, 1), "SAME", rhs_dilation=(2, 2),
                                             dimension_numbers=dn)           # dilated
            h = jax.lax.conv_general_dilated(h, k3, (1, 1), ((1, 1), (1, 1)),
                                             feature_group_count=4,
                                             dimension_numbers=dn)           # grouped
            mx = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                       ((0, 0), (1, 1), (1, 1), (0, 0)))     # max pool
            av = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                       "VALID") / 4.0                        # avg pool
            p = mx + av                                                       # [2,8,8,16]
            up = jax.lax.conv_general_dilated(p, k4, (1, 1), ((1, 2), (1, 2)),
                                              lhs_dilation=(2, 2),
                                              dimension_numbers=dn)          # transposed
            return wsc(up, None, "data", "model", None), p
        xs = S(None, "data", "model", None)
        f = jax.jit(f, in_shardings=(xs, S(), S(None, None, None, "model"), S(), S()),
                    out_shardings=(S(None, "data", "model", None), S("data", None, "model", None)))
        return f, (sds((2, 32, 32, 8)), sds((3, 3, 8, 16)), sds((3, 3, 16, 16)),
                   sds((3, 3, 4, 16)), sds((3, 3, 16, 8)))

    # 10. pad / roll / concatenate / reverse / strided slice on sharded axes --------------
    @prog
    def pad_roll_concat():
        def f(x, y):
            a = jnp.pad(x, ((3, 5), (2, 6)))                           # [40,72]
            b = jnp.roll(x, 5, axis=1) + jnp.roll(x, -3, axis=0)
            c = jnp.concatenate([x, y, b], axis=1)                      # [32,192]
            d = jnp.flip(c, axis=1)[:, ::3]                             # reverse + stride
            e = jnp.pad(x, ((1, 1), (0, 0)), mode="edge")               # [34,64]
            g = jnp.pad(y, ((0, 0), (4, 4)), mode="reflect")            # [32,72]
            return a, d, e[1:33] + g[:, 4:68]
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S("model", "data"), S("data", "model")))
        return f, (sds((32, 64)), sds((32, 64)))

    # 11. int8 x int8 -> int32 dot, bf16 mixed precision -----------------------------------
    @prog
    def int8_bf16():
        def f(xi, wi, scale, xb, wb):
            acc = jax.lax.dot_general(xi, wi, (((1,), (0,)), ((), ())),
                                      preferred_element_type=jnp.int32)  # [B,N] int32
            deq = acc.astype(jnp.float32) * scale
            h = jnp.einsum("bd,df->bf", xb, wb, preferred_element_type=jnp.float32)
            hb = jax.nn.gelu(h).astype(jnp.bfloat16)
            y = (hb @ wb.T).astype(jnp.float32)
            return deq, y, jnp.sum(acc, axis=0)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None), S(None),
                                     S("data", None), S(None, "model")),
                    out_shardings=(S("data", "model"), S("data", None), S("model")))
        return f, (sds((32, 64), jnp.int8), sds((64, 48), jnp.int8), sds((48,)),
                   sds((32, 64), jnp.bfloat16), sds((64, 128), jnp.bfloat16))

    # 12. FFT --------------------------------------------------------------------------------
    @prog
    def fft():
        def f(x, y):
            a = jnp.abs(jnp.fft.rfft(x, axis=-1))[..., :16]              # last axis whole
            c = jnp.fft.fft(y.astype(jnp.complex64), axis=0)              # data-sharded axis
            b = jnp.fft.irfft2(jnp.fft.rfft2(x), s=x.shape[-2:])
            return a, jnp.real(c) + jnp.imag(c), b
        f = jax.jit(f, in_shardings=(S("data", None, "model"), S("data", "model")),
                    out_shardings=(S("data", None, "model"), S("data", "model"),
                                   S("data", None, "model")))
        return f, (sds((4, 16, 32)), sds((32, 64)))

    # 13. shard_map collectives: psum / all_gather / ppermute / psum_scatter / all_to_all ----
    @prog
    def shmap_collectives():
        n = 4

        def local(x, w):          # x [8/2, 64/4]=[4,16]; w [16/4, 32] = [4,32]
            wg = jax.lax.all_gather(w, "model", axis=0, tiled=True)      # [16,32]
            h = x @ wg                                                   # [4,32]
            h = jax.lax.ppermute(h, "model", [(j, (j + 1) % n) for j in range(n)])
            h = h + jax.lax.ppermute(h, "data", [(0, 1), (1, 0)])
            r = jax.lax.psum_scatter(h, "model", scatter_dimension=1, tiled=True)  # [4,8]
            a = jax.lax.all_to_all(r, "model", split_axis=0, concat_axis=1, tiled=True)  # [1,32]
            m = jax.lax.pmax(jnp.max(a), ("data", "model"))
            s = jax.lax.psum(jnp.sum(r), "data")
            return a / m, r * s, jax.lax.pmean(h, "data")

        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("data", "model"), P("model", None)),
                           out_specs=(P(("data", "model"), None), P("data", "model"),
                                      P(None, "model")), check_vma=False)

        def f(x, w):
            a, r, h = sm(jnp.sin(x), w)
            return a * 2.0, r, h
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S(("data", "model"), None), S("data", "model"),
                                   S(None, "model")))
        return f, (sds((8, 64)), sds((16, 32)))

    # 14. with_sharding_constraint mid-program, reshapes merging/splitting sharded dims,
    #     vmap'd matmul with multiple batch dims ------------------------------------------
    @prog
    def reshape_vmap():
        def f(x, w):   # x [4,8,16,32] ; w [4,8,32,24]
            mm = jax.vmap(jax.vmap(jnp.matmul))(x, w)        # [4,8,16,24], 2 batch dims
            mm = wsc(mm, "data", "model", None, None)
            r = mm.reshape(32, 16, 24)                       # merge sharded dims 0,1
            r = wsc(r, ("data", "model"), None, None)
            t = r.reshape(32, 4, 4, 24).transpose(1, 0, 2, 3)  # split unsharded, transpose
            t = wsc(t, "model", "data", None, None)
            u = t.reshape(4, 32 * 4 * 24)                   # merge sharded + unsharded
            v = u.reshape(4, 8, 4, 96)                      # split
            return wsc(v, None, "model", None, "data"), jnp.sum(t, axis=(0, 2))
        f = jax.jit(f, in_shardings=(S("data", "model", None, None), S("data", None, None, "model")),
                    out_shardings=(S(None, "model", None, "data"), S("data", "model")))
        return f, (sds((4, 8, 16, 32)), sds((4, 8, 32, 24)))

    # 15. iota / where / clip / integer arithmetic / comparisons ----------------------------
    @prog
    def iota_where_clip():
        def f(x, k):
            r = jax.lax.broadcasted_iota(jnp.int32, x.shape, 0)
            c = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
            tri = jnp.where(r >= c, x, jnp.clip(x, -0.5, 0.5))
            band = jnp.where(jnp.abs(r - c) <= (jnp.abs(k) % 5), tri, 0.0)
            ii = (r * 7 + c * 3 + k) % 11 - 5
            ii = jnp.clip(ii, -3, 3) << 1
            sel = jax.lax.select(x > 0, jnp.exp(-x), jnp.expm1(x))
            return band + sel, ii, jnp.sign(x) * jnp.floor(jnp.abs(x) * 4) / 4
        f = jax.jit(f, in_shardings=(S("data", "model"), S()),
                    out_shardings=(S("model", "data"), S("data", "model"), S(None, "model")))
        return f, (sds((64, 64)), sds((), jnp.int32))

    # 16. while_loop with data-dependent trip count + scatter max / gather on sharded axes -
    @prog
    def while_scatter():
        def f(x, idx, upd):
            idx = jnp.abs(idx) % x.shape[0]

            def cond(c):
                i, y = c
                return (i < 10) & (jnp.max(jnp.abs(y)) < 50.0)

            def body(c):
                i, y = c
                return i + 1, y * 1.5 + 0.1

            _, y = jax.lax.while_loop(cond, body, (0, x))
            y = y.at[idx].max(upd)                         # scatter-max rows
            y = y.at[idx, 3].add(1.0)                      # scatter-add elements
            g = y[idx[::2]]                                # gather rows
            return y, g
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data"), S("data", "model")),
                    out_shardings=(S("data", "model"), S(None, "model")))
        return f, (sds((64, 32)), sds((16,), jnp.int32), sds((16, 32)))

    # 17. mixed reductions / logsumexp / variance / norms over sharded + unsharded dims ---
    @prog
    def reductions():
        def f(x):
            a = jax.nn.logsumexp(x, axis=(1, 2))                        # model + none
            b = jnp.var(x, axis=0)                                       # data
            c = jnp.linalg.norm(x, axis=-1)                             # none
            d = jnp.prod(jnp.tanh(x) * 0.1 + 1.0, axis=1)                # model
            e = jnp.any(x > 2.5, axis=(0, 1))                           # data + model
            return a, b, c, d, e.astype(jnp.int32)
        f = jax.jit(f, in_shardings=(S("data", "model", None),),
                    out_shardings=(S("data"), S("model", None), S("data", "model"),
                                   S(None, None), S(None)))
        return f, (sds((16, 32, 24)),)

    # 18. jax.random inside jit (threefry / rng_bit_generator) with sharded outputs -------
    @prog
    def random_dropout():
        def f(key, x):
            k1, k2 = jax.random.split(key)
            keep = jax.random.bernoulli(k1, 0.8, x.shape)
            y = jnp.where(keep, x / 0.8, 0.0)
            n = jax.random.normal(k2, (x.shape[1], 16))
            return wsc(y, "data", "model") @ n
        f = jax.jit(f, in_shardings=(S(), S("data", "model")), out_shardings=S("data", None))
        return f, (jax.ShapeDtypeStruct((2,), jnp.uint32), sds((32, 64)))

    # 19. partially manual shard_map (only 'model' manual, 'data' auto) -------------------
    @prog
    def shmap_partial():
        def local(x, w):              # x [B, D/4], w [D/4, F]
            h = jax.lax.psum(x @ w, "model")                     # [B, F]
            g = jax.lax.all_gather(x, "model", axis=1, tiled=True)  # [B, D]
            return h, g * 2.0
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=(P(), P()), axis_names={"model"}, check_vma=False)

        def f(x, w):
            x = wsc(x, "data", "model")
            h, g = sm(x, w)
            return jnp.tanh(h), g
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S("data", None)))
        return f, (sds((16, 64)), sds((64, 32)))

    # 20. uneven (non-divisible) intermediate shardings -------------------------------------
    @prog
    def uneven():
        def f(x, w):
            a = wsc(x[:29, :61], "data", "model")                  # 29 over 2, 61 over 4
            b = jnp.tanh(a) @ w[:61, :30]                            # [29,30]
            b = wsc(b, "model", "data")
            c = jnp.sum(b, axis=0)
            return b, c
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S(None, None), S(None)))
        return f, (sds((32, 64)), sds((64, 32)))

    # 21. dots with contracting dims sharded on different mesh axes, transposed operands ---
    @prog
    def dot_mismatch():
        def f(a, b, c):
            x = a @ b                      # a [64,128] (None,'data'), b [128,64] ('model',None)
            y = jnp.einsum("ij,kj->ik", x, c)   # c [32,64] ('data','model')
            z = jnp.einsum("ik,ij->kj", y, a)   # contract over i
            return y, z
        f = jax.jit(f, in_shardings=(S(None, "data"), S("model", None), S("data", "model")),
                    out_shardings=(S("model", "data"), S(None, ("data", "model"))))
        return f, (sds((64, 128)), sds((128, 64)), sds((32, 64)))

