"""JAX probe programs, batch 3 (2026-12-05): 15 shard_map programs, mostly partly manual (axis_names a strict subset of
the mesh axes; the other axis stays automatic and may split values inside the body)."""


def define(c):
    jax, jnp, np, P = c.jax, c.jnp, c.np, c.P
    S, sds, wsc, prog = c.S, c.sds, c.wsc, c.prog
    mesh = c.mesh

    def iwsc(x, *spec):
        # with_sharding_constraint inside a shard_map body: bare PartitionSpec, resolved
        # against the (partly manual) context mesh.
        return jax.lax.with_sharding_constraint(x, P(*spec))

    # 1. partial-auto over 'model': dot + psum, outputs P() and P('model') ------------------
    @prog
    def pa_dot_psum():
        def local(x, w):                 # x [16, 64/4], w [64/4, 32]
            h = jax.lax.psum(x @ w, "model")          # [16, 32] replicated over model
            y = jnp.tanh(x) * 2.0                     # [16, 16] per shard
            return h, y
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=(P(), P(None, "model")), axis_names={"model"},
                           check_vma=False)

        def f(x, w):
            h, y = sm(x, w)
            return h + 1.0, y
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S("data", "model")))
        return f, (sds((16, 64)), sds((64, 32)))

    # 2. same, with with_sharding_constraint on the auto axis inside the body ------------------
    @prog
    def pa_wsc_inside():
        def local(x, w):                 # x [16, 16], w [16, 32]
            x = iwsc(x, "data", None)
            p = x @ w
            p = iwsc(p, None, "data")                 # reshard auto axis to the other dim
            h = jax.lax.psum(p, "model")
            h = iwsc(h, "data", None)
            return jnp.exp(h * 0.01), jnp.sum(p, axis=0)
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=(P(), P("model")), axis_names={"model"},
                           check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S("model")))
        return f, (sds((16, 64)), sds((64, 32)))

    # 3. partial-auto over 'data' (manual on the first mesh axis), 'model' auto ---------------
    @prog
    def pa_data_manual():
        def local(x, w, b):             # x [8/2, 64], w [64, 48] (auto-split on model), b [48]
            h = jnp.maximum(x @ w + b, 0.0)          # [4, 48]
            s = jax.lax.psum(jnp.sum(h, axis=0), "data")   # [48]
            m = jax.lax.pmax(jnp.max(h), "data")
            return h / m, s
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("data"), P(), P()),
                           out_specs=(P("data"), P()), axis_names={"data"},
                           check_vma=False)

        def f(x, w, b):
            return sm(x, w, b)
        f = jax.jit(f, in_shardings=(S("data", None), S(None, "model"), S("model")),
                    out_shardings=(S("data", "model"), S("model")))
        return f, (sds((8, 64)), sds((64, 48)), sds((48,)))

    # 4. psum_scatter + all_gather(tiled) inside partial-auto over 'model' ---------------------
    @prog
    def pa_rs_ag():
        def local(x, w):                # x [16, 16] (dim0 auto on data), w [16, 32]
            p = x @ w                                 # partial sums over model
            r = jax.lax.psum_scatter(p, "model", scatter_dimension=1, tiled=True)  # [16, 8]
            r = jax.nn.gelu(r)
            g = jax.lax.all_gather(r, "model", axis=1, tiled=True)                # [16, 32]
            g2 = jax.lax.all_gather(r, "model", axis=0, tiled=False)              # [4, 16, 8]
            return g, r, jnp.sum(g2, axis=0)
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=(P(), P(None, "model"), P()), axis_names={"model"},
                           check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", None), S("data", "model"), S(None, None)))
        return f, (sds((16, 64)), sds((64, 32)))

    # 5. MoE dispatch: all_to_all over 'model' (experts), tokens auto-split on 'data' ---------
    @prog
    def pa_moe_a2a():
        E, C, D, F = 4, 8, 16, 32       # experts (=model size), capacity, model dim, ffn dim

        def local(tok, wi, wo):         # tok [E, C, D] per model shard (its tokens, for all experts)
            # dispatch: [E, C, D] -> each shard gets its expert's tokens from all shards
            d = jax.lax.all_to_all(tok, "model", split_axis=0, concat_axis=0, tiled=True)  # [E, C, D]
            h = jax.nn.relu(jnp.einsum("ecd,df->ecf", d, wi[0]))
            o = jnp.einsum("ecf,fd->ecd", h, wo[0])
            back = jax.lax.all_to_all(o, "model", split_axis=0, concat_axis=0, tiled=True)
            return back
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("model"), P("model"), P("model")),
                           out_specs=P("model"), axis_names={"model"}, check_vma=False)

        def f(tok, wi, wo):             # tok [4*E, C, D]
            tok = wsc(tok, "model", "data", None)
            return sm(tok, wi, wo)
        f = jax.jit(f, in_shardings=(S("model", "data", None), S("model", None, None),
                                     S("model", None, None)),
                    out_shardings=S("model", "data", None))
        return f, (sds((4 * E, C, D)), sds((E, D, F)), sds((E, F, D)))

    # 6. ppermute ring inside scan inside partial-auto shard_map (pipeline-style) -------------
    @prog
    def pa_ppermute_scan():
        n = 4

        def local(x, ws):               # x [8, 32] (dim0 auto-split on data), ws [1, 32, 32] stage weights
            w = ws[0]
            perm = [(j, (j + 1) % n) for j in range(n)]

            def step(carry, _):
                h = jnp.tanh(carry @ w)
                h = jax.lax.ppermute(h, "model", perm)
                return h, jnp.sum(h, axis=1)
            h, ys = jax.lax.scan(step, x, None, length=n)
            return h, ys                # ys [n, 8]
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(), P("model")),
                           out_specs=(P("model"), P(None, "model")), axis_names={"model"},
                           check_vma=False)

        def f(x, ws):
            return sm(x, ws)
        f = jax.jit(f, in_shardings=(S("data", None), S("model", None, None)),
                    out_shardings=(S("model", None), S(None, "model")))
        return f, (sds((8, 32)), sds((4, 32, 32)))

    # 7. reductions / reshape / transpose / softmax inside the partial-auto body ------------
    @prog
    def pa_softmax_reshape():
        def local(x):                   # x [8, 16, 8] per model shard; dim0 auto on data
            x = iwsc(x, "data", None, None)
            s = jax.nn.softmax(x, axis=0)             # softmax over the auto-split dim
            mx = jnp.max(x, axis=0)                   # [16, 8] reduce over auto-split dim
            sm_ = jnp.sum(x * x, axis=(0, 2))         # [16]
            r = s.reshape(8, 128).T                   # [128, 8] (transpose moves auto dim)
            r = r.reshape(16, 8, 8).transpose(2, 0, 1)
            tot = jax.lax.psum(sm_, "model")
            return r, mx, tot
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, None, "model"),),
                           out_specs=(P(None, None, "model"), P(None, "model"), P()),
                           axis_names={"model"}, check_vma=False)

        def f(x):
            return sm(x)
        f = jax.jit(f, in_shardings=(S("data", None, "model"),),
                    out_shardings=(S("data", None, "model"), S(None, "model"), S()))
        return f, (sds((8, 16, 32)),)

    # 8. nested: jit -> shard_map over 'data' -> jnp -> shard_map over 'model' ------------------
    @prog
    def pa_nested():
        def inner(a, w):                # a [4, 64/4], w [64/4, 32]
            return jax.lax.psum(a @ w, "model")

        def outer(x, w):                # x [4, 64] (model auto), w [64, 32]
            y = jnp.sin(x) + 1.0
            z = jax.shard_map(inner, in_specs=(P(None, "model"), P("model", None)),
                              out_specs=P(), axis_names={"model"}, check_vma=False)(y, w)
            return jax.lax.psum(jnp.sum(z, axis=0), "data"), z
        sm = jax.shard_map(outer, mesh=mesh, in_specs=(P("data"), P()),
                           out_specs=(P(), P("data")), axis_names={"data"}, check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S(), S("data", None)))
        return f, (sds((8, 64)), sds((64, 32)))

    # 9. fully manual shard_map (in_specs name both axes), for comparison ------------------------
    @prog
    def fm_dot_rs():
        def local(x, w):                # x [8/2, 64/4], w [64/4, 32]
            p = x @ w
            r = jax.lax.psum_scatter(p, "model", scatter_dimension=1, tiled=True)  # [4, 8]
            s = jax.lax.psum(jnp.sum(r * r), ("data", "model"))
            g = jax.lax.all_gather(r, "data", axis=0, tiled=True)  # [8, 8]
            return r / s, g
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("data", "model"), P("model", None)),
                           out_specs=(P("data", "model"), P(None, "model")), check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=(S("data", "model"), S(None, "model")))
        return f, (sds((8, 64)), sds((64, 32)))

    # 10. uneven auto-split shapes inside partial-auto shard_map -----------------------------
    @prog
    def pa_uneven():
        def local(x, w):                # manual on data: x [5, 24]; 10 over auto 'model'(4) is uneven
            h = x @ w                                   # [5, 10]
            h = iwsc(h, None, "model")                  # 10 over model(4): uneven
            t = iwsc(jnp.tanh(h).T, "model", None)      # [10, 5]
            return jax.lax.psum(jnp.sum(t, axis=1), "data"), h
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P("data"), P()),
                           out_specs=(P(), P("data")), axis_names={"data"}, check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", None), S(None, None)),
                    out_shardings=(S(None), S("data", None)))
        return f, (sds((10, 24)), sds((24, 10)))

    # 11. auto dim 6 over 'data'(2), then 5 over 'data' (uneven) ----------------------------------------------
    @prog
    def pa_uneven_data():
        def local(x, w):                # manual on model: x [6, 16], w [16, 12]
            x = iwsc(x, "data", None)                   # 6 over 2 (even)
            h = jax.lax.psum(x @ w, "model")            # [6, 12]
            h = iwsc(h[:5], "data", None)               # 5 over 2: uneven
            return jnp.cumsum(h, axis=0)
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=P(), axis_names={"model"}, check_vma=False)

        def f(x, w):
            return sm(x, w)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=S(None, None))
        return f, (sds((6, 64)), sds((64, 12)))

    # 12. gradient of a partial-auto shard_map function -----------------------------------------
    @prog
    def pa_grad():
        def local(x, w1, w2):           # x [16, 32], w1 [32, 64/4], w2 [64/4, 32]
            h = jax.nn.gelu(x @ w1)
            return jax.lax.psum(h @ w2, "model")
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "model"), P("model", None)),
                           out_specs=P(), axis_names={"model"}, check_vma=False)

        def loss(w1, w2, x):
            y = sm(x, w1, w2)
            return jnp.mean((y - x) ** 2)

        def f(w1, w2, x):
            l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x)
            return l, g1, g2
        f = jax.jit(f, in_shardings=(S(None, "model"), S("model", None), S("data", None)),
                    out_shardings=(S(), S(None, "model"), S("model", None)))
        return f, (sds((32, 64)), sds((64, 32)), sds((16, 32)))

    # 13. dot contracting the auto-split dim inside partial-auto body + axis_index ------------
    @prog
    def pa_auto_contract():
        def local(x, y):                # x [16, 8] dim0 auto on data; y [16, 8]
            x = iwsc(x, "data", None)
            y = iwsc(y, "data", None)
            g = x.T @ y                                  # contracts the auto-split dim
            i = jax.lax.axis_index("model").astype(jnp.float32)
            g = g * (i + 1.0)
            tot = jax.lax.psum(g, "model")
            return g, tot
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P(None, "model")),
                           out_specs=(P("model"), P()), axis_names={"model"}, check_vma=False)

        def f(x, y):
            return sm(x, y)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("model", None), S(None, None)))
        return f, (sds((16, 32)), sds((16, 32)))

    # 14. scan with auto-split carry + gather/dynamic_slice inside partial-auto ---------------
    @prog
    def pa_scan_gather():
        def local(tab, idx, h0):        # tab [32, 16/4] ; idx [8] ; h0 [8, 4]
            e = jnp.take(tab, idx, axis=0)               # [8, 4]
            e = iwsc(e, "data", None)

            def step(h, t):
                h = jnp.tanh(h + e * t)
                return h, jnp.max(h, axis=0)
            h, ys = jax.lax.scan(step, h0, jnp.arange(3, dtype=jnp.float32))
            k = jax.lax.dynamic_slice_in_dim(h, idx[0] % 4, 4, axis=0)
            return h, ys, jax.lax.psum(jnp.sum(k), "model")
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P(), P(None, "model")),
                           out_specs=(P(None, "model"), P(None, "model"), P()),
                           axis_names={"model"}, check_vma=False)

        def f(tab, idx, h0):
            return sm(tab, idx, h0)
        f = jax.jit(f, in_shardings=(S("data", "model"), S(None), S("data", "model")),
                    out_shardings=(S("data", "model"), S(None, "model"), S()))
        return f, (sds((32, 16)), sds((8,), jnp.int32), sds((8, 16)))

    # 15. two chained partial-auto shard_maps with an auto-sharded reshard between them -------
    @prog
    def pa_chain():
        def l1(x, w):                   # x [16, 64/4], w [64/4, 32]
            return jax.lax.psum_scatter(x @ w, "model", scatter_dimension=1, tiled=True)  # [16, 8]

        def l2(h, v):                   # h [16/2, 32] manual on data, v [32, 16]
            o = jnp.tanh(h) @ v
            return o, jax.lax.psum(jnp.sum(o * o), "data")
        s1 = jax.shard_map(l1, mesh=mesh, in_specs=(P(None, "model"), P("model", None)),
                           out_specs=P(None, "model"), axis_names={"model"}, check_vma=False)
        s2 = jax.shard_map(l2, mesh=mesh, in_specs=(P("data"), P()),
                           out_specs=(P("data"), P()), axis_names={"data"}, check_vma=False)

        def f(x, w, v):
            h = s1(x, w)
            return s2(h, v)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None), S(None, "model")),
                    out_shardings=(S("data", "model"), S()))
        return f, (sds((16, 64)), sds((64, 32)), sds((32, 16)))
