"""JAX probe programs, batch 4 (2026-12-05): 6 nested shard_maps (a shard_map inside another's
body, each manual over one mesh axis), the shapes JAX writes for nested manual regions."""


def define(c):
    jax, jnp, P = c.jax, c.jnp, c.P
    S, sds, prog = c.S, c.sds, c.prog
    mesh = c.mesh

    def smap(fn, in_specs, out_specs, axes, **kw):
        return jax.shard_map(fn, in_specs=in_specs, out_specs=out_specs, axis_names=axes,
                             check_vma=False, **kw)

    # 1. outer over 'model', inner over 'data' (the other order from pa_nested) ---------------
    @prog
    def nest_model_then_data():
        def inner(a):                   # a [16/2, 32/4]
            return jax.lax.psum(jnp.sum(a * a, axis=0, keepdims=True), "data")

        def outer(x):                   # x [16, 32/4] (data auto)
            y = jnp.exp(x * 0.1)
            z = smap(inner, (P("data", None),), P(), {"data"})(y)     # [1, 8]
            return y / z
        sm = smap(outer, (P(None, "model"),), P(None, "model"), {"model"}, mesh=mesh)
        f = jax.jit(lambda x: sm(x), in_shardings=(S("data", "model"),),
                    out_shardings=S("data", "model"))
        return f, (sds((16, 32)),)

    # 2. inner result split by the inner axis, leaving as a split value of the outer body ------
    @prog
    def nest_inner_split_out():
        def inner(a, w):                # a [8, 64/4], w [64/4, 32]
            p = a @ w                   # partial sums over model
            return jax.lax.psum_scatter(p, "model", scatter_dimension=1, tiled=True)  # [8, 8]

        def outer(x, w):                # x [16/2, 64], w [64, 32]
            h = smap(inner, (P(None, "model"), P("model", None)), P(None, "model"),
                     {"model"})(x, w)   # [8, 32], model-split columns
            return jnp.tanh(h)
        sm = smap(outer, (P("data", None), P()), P("data", None), {"data"}, mesh=mesh)
        f = jax.jit(lambda x, w: sm(x, w), in_shardings=(S("data", "model"), S("model", None)),
                    out_shardings=S("data", "model"))
        return f, (sds((16, 64)), sds((64, 32)))

    # 3. collectives over both axes in the inner body --------------------------------------
    @prog
    def nest_both_axes_collectives():
        def inner(a):                   # a [8/2, 16/4]
            s = jax.lax.psum(jnp.sum(a), ("data", "model"))
            g = jax.lax.all_gather(a, "model", axis=1, tiled=True)   # [4, 16]
            return g / s

        def outer(x):                   # x [8/2... manual data], [4, 16]
            y = x + 1.0
            return smap(inner, (P(None, "model"),), P(None, None), {"model"})(y)
        sm = smap(outer, (P("data", None),), P("data", None), {"data"}, mesh=mesh)
        f = jax.jit(lambda x: sm(x), in_shardings=(S("data", "model"),),
                    out_shardings=S("data", None))
        return f, (sds((8, 16)),)

    # 4. nested shard_map inside a scan inside the outer body ------------------------------
    @prog
    def nest_in_scan():
        def inner(h, w):                # h [4, 32/4], w [32/4, 32]
            return jax.lax.psum(h @ w, "model")

        def outer(x, w):                # x [8/2, 32] manual data
            def step(carry, _):
                n = smap(inner, (P(None, "model"), P("model", None)), P(), {"model"})(carry, w)
                n = jnp.tanh(n)
                return n, jnp.sum(n)
            h, ys = jax.lax.scan(step, x, None, length=3)
            return h, jax.lax.psum(ys, "data")
        sm = smap(outer, (P("data", None), P()), (P("data", None), P()), {"data"}, mesh=mesh)
        f = jax.jit(lambda x, w: sm(x, w), in_shardings=(S("data", None), S("model", None)),
                    out_shardings=(S("data", None), S()))
        return f, (sds((8, 32)), sds((32, 32)))

    # 5. auto computation between two inner shard_maps, constrained along the free axis ------
    @prog
    def nest_two_inner():
        def inner_a(a):                 # a [8, 32/4]
            return a * jax.lax.axis_index("model").astype(a.dtype)

        def inner_b(b):                 # b [8/4, 32]
            return jax.lax.psum(b, "model")

        def outer(x):                   # x [16/2, 32] manual data
            y = smap(inner_a, (P(None, "model"),), P(None, "model"), {"model"})(x)
            y = jax.lax.with_sharding_constraint(jnp.sin(y), P("model", None))
            return smap(inner_b, (P("model", None),), P(), {"model"})(y)   # [2, 32]
        sm = smap(outer, (P("data", None),), P("data", None), {"data"}, mesh=mesh)
        f = jax.jit(lambda x: sm(x), in_shardings=(S("data", None),),
                    out_shardings=S("data", None))
        return f, (sds((16, 32)),)

    # 6. the outer body's auto axis splits values the inner shard_map then takes whole -------
    @prog
    def nest_auto_then_manual():
        def inner(a, b):                # a [8, 16/4], b [16/4, 8]
            return jax.lax.psum(a @ b, "model")

        def outer(x, w):                # x [8, 16] manual data; w [16, 8]
            x = jax.lax.with_sharding_constraint(x * 2.0, P(None, "model"))
            w = jax.lax.with_sharding_constraint(w + 1.0, P("model", None))
            r = smap(inner, (P(None, "model"), P("model", None)), P(), {"model"})(x, w)
            return jax.lax.with_sharding_constraint(r, P("model", None))
        sm = smap(outer, (P("data", None), P()), P("data", None), {"data"}, mesh=mesh)
        f = jax.jit(lambda x, w: sm(x, w), in_shardings=(S("data", "model"), S()),
                    out_shardings=S("data", "model"))
        return f, (sds((16, 16)), sds((16, 8)))
