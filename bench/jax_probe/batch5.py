"""JAX probe programs, batch 5 (2026-12-05): 11 programs with what a train step carries beside
its math: donated buffers, fp8 and int8 matmuls, the rbg PRNG, erf/tan/cbrt, cumulative sums,
reduce_precision, top_k, a psum_scatter in a fully manual body, an associative scan, the
gradients of strided slices."""


def define(c):
    jax, jnp, P = c.jax, c.jnp, c.P
    S, sds, wsc, prog = c.S, c.sds, c.wsc, c.prog
    mesh = c.mesh

    # 1. donated parameters (input_output_alias) in an SGD step ----------------------------
    @prog
    def donate_sgd():
        def step(w, x, y):
            def loss(w):
                return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
            g = jax.grad(loss)(w)
            return w - 0.1 * g
        f = jax.jit(step, in_shardings=(S(None, "model"), S("data", None), S("data", "model")),
                    out_shardings=S(None, "model"), donate_argnums=(0,))
        return f, (sds((32, 64)), sds((16, 32)), sds((16, 64)))

    # 2. fp8 matmul with scales (e4m3 operands, f32 accumulation) --------------------------
    @prog
    def fp8_matmul():
        def f(a, b, sa, sb):
            qa = (a / sa).astype(jnp.float8_e4m3fn)
            qb = (b / sb).astype(jnp.float8_e4m3fn)
            d = jax.lax.dot_general(qa, qb, (((1,), (0,)), ((), ())),
                                    preferred_element_type=jnp.float32)
            return d * sa * sb
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None), S(), S()),
                    out_shardings=S("data", None))
        return f, (sds((16, 64)), sds((64, 32)), sds(()), sds(()))

    # 3. rbg PRNG (rng-bit-generator) dropout ----------------------------------------------
    @prog
    def rbg_dropout():
        def f(key, x):
            k = jax.random.wrap_key_data(key, impl="rbg")
            keep = jax.random.bernoulli(k, 0.9, x.shape)
            return jnp.where(keep, x / 0.9, 0.0)
        f = jax.jit(f, in_shardings=(S(), S("data", "model")), out_shardings=S("data", "model"))
        return f, (sds((4,), jnp.uint32), sds((16, 32)))

    # 4. erf / tan / cbrt / logistic elementwise chain -------------------------------------
    @prog
    def special_math():
        def f(x):
            return jax.lax.erf(x) + jnp.tan(x * 0.1) + jnp.cbrt(x) + jax.nn.gelu(x, approximate=False)
        f = jax.jit(f, in_shardings=(S("data", "model"),), out_shardings=S("model", "data"))
        return f, (sds((16, 32)),)

    # 5. cumsum / cumprod / cummax along a split dim ---------------------------------------
    @prog
    def cumulative_split():
        def f(x):
            return jnp.cumsum(x, axis=1), jax.lax.cummax(x, axis=0), jnp.cumprod(x * 0.01 + 1.0, axis=1)
        f = jax.jit(f, in_shardings=(S("data", "model"),),
                    out_shardings=(S("data", "model"), S("data", "model"), S("data", None)))
        return f, (sds((16, 64)),)

    # 6. reduce_precision (bf16 emulation) in a matmul chain -------------------------------
    @prog
    def reduce_precision():
        def f(x, w):
            h = jax.lax.reduce_precision(x @ w, exponent_bits=8, mantissa_bits=7)
            return jnp.sum(h * h, axis=0)
        f = jax.jit(f, in_shardings=(S("data", None), S(None, "model")), out_shardings=S("model"))
        return f, (sds((32, 16)), sds((16, 64)))

    # 7. top_k over a split vocabulary dim -------------------------------------------------
    @prog
    def topk_vocab():
        def f(logits):
            v, i = jax.lax.top_k(logits, 4)
            return v, i
        f = jax.jit(f, in_shardings=(S("data", "model"),),
                    out_shardings=(S("data", None), S("data", None)))
        return f, (sds((8, 128)),)

    # 8. psum_scatter + all_gather (ZeRO-style) in a fully manual body ----------------------
    @prog
    def zero_grad_shard():
        def local(g, w):                # g [16/8... ] per device grads, w shard
            gs = jax.lax.psum_scatter(g, ("data", "model"), scatter_dimension=0, tiled=True)
            w = w - 0.01 * gs
            return jax.lax.all_gather(w, ("data", "model"), axis=0, tiled=True)
        sm = jax.shard_map(local, mesh=mesh, in_specs=(P(), P(("data", "model"))),
                           out_specs=P(), check_vma=False)
        f = jax.jit(lambda g, w: sm(g, w), in_shardings=(S(), S(("data", "model"))),
                    out_shardings=S())
        return f, (sds((64, 8)), sds((64, 8)))

    # 9. associative scan (log-depth prefix of 2x2 matrices) over a split dim --------------
    @prog
    def assoc_scan():
        def f(a, b):
            def combine(x, y):
                return (x[0] * y[0], x[1] * y[0] + y[1])
            return jax.lax.associative_scan(combine, (a, b), axis=0)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", "model")),
                    out_shardings=(S("data", "model"), S("data", "model")))
        return f, (sds((16, 32)), sds((16, 32)))

    # 10. int8 x int8 -> int32 matmul with per-channel dequant -------------------------------
    @prog
    def int8_int32_dot():
        def f(a, b, s):
            qa = jnp.clip(jnp.round(a * 16.0), -127, 127).astype(jnp.int8)
            qb = jnp.clip(jnp.round(b * 16.0), -127, 127).astype(jnp.int8)
            acc = jax.lax.dot_general(qa, qb, (((1,), (0,)), ((), ())),
                                      preferred_element_type=jnp.int32)
            return acc.astype(jnp.float32) * s[None, :]
        f = jax.jit(f, in_shardings=(S("data", "model"), S("model", None), S(None)),
                    out_shardings=S("data", "model"))
        return f, (sds((16, 64)), sds((64, 32)), sds((32,)))

    # 11. gradients of strided slices (x[:, ::2], x[1::3]): pads with interior padding --------
    @prog
    def strided_slice_grad():
        def loss(x, w, v):
            return jnp.sum(jnp.tanh(x[:, ::2]) * w) + jnp.sum(jnp.sin(x[1::3, :]) * v)
        f = jax.jit(jax.grad(loss), in_shardings=(S("data", "model"), S("data", "model"),
                                                 S("data", "model")),
                    out_shardings=S("data", "model"))
        return f, (sds((24, 64)), sds((24, 32)), sds((8, 64)))
