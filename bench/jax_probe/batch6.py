"""JAX probe programs, batch 6 (2026-12-05): 8 partly manual shard_maps (manual over 'model',
'data' free) whose bodies slice, pad, concatenate, dynamic-slice, gather, scatter, sort and
convolve values the free axis splits."""


def define(c):
    jax, jnp, P = c.jax, c.jnp, c.P
    S, sds, prog = c.S, c.sds, c.prog
    mesh = c.mesh

    def iwsc(x, *spec):
        return jax.lax.with_sharding_constraint(x, P(*spec))

    def pa(local, in_specs, out_specs):
        return jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                             axis_names={"model"}, check_vma=False)

    # 1. slice / pad / concatenate along the free-split dim --------------------------------
    @prog
    def pam_slice_pad_concat():
        def local(x):                   # x [32, 16] per model shard, dim0 free (data)
            x = iwsc(x, "data", None)
            a = x[2:30]
            b = jnp.pad(a, ((2, 2), (0, 0)))
            y = jnp.concatenate([b[16:], b[:16]], axis=0)
            return iwsc(y * 2.0, "data", None)
        f = jax.jit(lambda x: pa(local, (P(None, "model"),), P(None, "model"))(x),
                    in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds((32, 64)),)

    # 2. dynamic_slice of a free-split value at a runtime offset ---------------------------
    @prog
    def pam_dynamic_slice():
        def local(x, i):                # x [64, 8]
            x = iwsc(x, "data", None)
            w = jax.lax.dynamic_slice_in_dim(x, i[0], 16, axis=0)
            return jnp.sum(w * w, axis=0, keepdims=True)
        f = jax.jit(lambda x, i: pa(local, (P(None, "model"), P()), P(None, "model"))(x, i),
                    in_shardings=(S("data", "model"), S()), out_shardings=S(None, "model"))
        return f, (sds((64, 32)), sds((1,), jnp.int32))

    # 3. embedding gather from a free-split table -----------------------------------------
    @prog
    def pam_gather():
        def local(table, ids):          # table [128, 16] vocab split by data; ids [8]
            table = iwsc(table, "data", None)
            return jnp.take(table, ids, axis=0)
        f = jax.jit(lambda t, i: pa(local, (P(None, "model"), P()), P(None, "model"))(t, i),
                    in_shardings=(S("data", "model"), S()), out_shardings=S(None, "model"))
        return f, (sds((128, 64)), sds((8,), jnp.int32))

    # 4. segment sum (scatter-add) into a free-split output ---------------------------------
    @prog
    def pam_scatter():
        def local(x, seg):              # x [32, 8]; seg [32]
            x = iwsc(x, "data", None)
            out = jax.ops.segment_sum(x, seg, num_segments=16)
            return iwsc(out, "data", None)
        f = jax.jit(lambda x, s: pa(local, (P(None, "model"), P()), P(None, "model"))(x, s),
                    in_shardings=(S("data", "model"), S()), out_shardings=S("data", "model"))
        return f, (sds((32, 32)), sds((32,), jnp.int32))

    # 5. sort along a dim the free axis does not split --------------------------------------
    @prog
    def pam_sort():
        def local(x):                   # x [16, 32]: rows split by data, sort each row
            x = iwsc(x, "data", None)
            return jnp.sort(x, axis=1)
        f = jax.jit(lambda x: pa(local, (P(None, "model"),), P(None, "model"))(x),
                    in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds((16, 128)),)

    # 6. conv whose batch the free axis splits ----------------------------------------------
    @prog
    def pam_conv():
        def local(x, k):                # x [8, 16, 4] NWC, k [3, 4, 8] WIO; batch split by data
            x = iwsc(x, "data", None, None)
            y = jax.lax.conv_general_dilated(x, k, (1,), "SAME",
                                             dimension_numbers=("NWC", "WIO", "NWC"))
            return jax.lax.psum(y, "model")
        f = jax.jit(lambda x, k: pa(local, (P(None, None, "model"), P(None, "model", None)),
                                    P())(x, k),
                    in_shardings=(S("data", None, "model"), S(None, "model", None)),
                    out_shardings=S("data", None, None))
        return f, (sds((8, 16, 16)), sds((3, 16, 8)))

    # 7. reverse + roll along the free-split dim --------------------------------------------
    @prog
    def pam_reverse_roll():
        def local(x):                   # x [32, 16]
            x = iwsc(x, "data", None)
            return jnp.roll(x[::-1], 3, axis=0)
        f = jax.jit(lambda x: pa(local, (P(None, "model"),), P(None, "model"))(x),
                    in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds((32, 64)),)

    # 8. cumulative sum (reduce-window) along the free-split dim -----------------------------
    @prog
    def pam_cumsum():
        def local(x):                   # x [32, 16]
            x = iwsc(x, "data", None)
            return jnp.cumsum(x, axis=0)
        f = jax.jit(lambda x: pa(local, (P(None, "model"),), P(None, "model"))(x),
                    in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds((32, 64)),)
