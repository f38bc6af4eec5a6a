"""JAX probe programs, batch 7 (2026-12-05): 8 layer patterns whose gradients write unusual
HLO on split dims: a strided convolution and its gradients (base dilation), max- and
average-pooling gradients (select-and-scatter, padded reduce-window), reflect padding, an
image resize, repeat/tile, take_along_axis and a reverse cumulative sum. The shapes come from
SMALL here; batch8.py registers the same programs at LARGE shapes."""

# Per program: the shapes of its arguments (and, for the resize, of its result).
SMALL = {
    "strided_conv_grad": ((4, 64, 8), (3, 8, 8)),
    "maxpool_grad": ((4, 64, 8),),
    "avgpool_grad": ((4, 64, 8),),
    "reflect_pad_grad": ((16, 64),),
    "resize_bilinear": ((4, 32, 16, 3), (4, 64, 32, 3)),
    "repeat_tile": ((16, 32),),
    "take_along": ((16, 64), (16, 8)),
    "reverse_cumsum": ((16, 64),),
}
# Per-device arrays of hundreds of KiB to MiBs: bytes, not collective latency, decide.
LARGE = {
    "strided_conv_grad": ((32, 4096, 64), (3, 64, 64)),
    "maxpool_grad": ((32, 2048, 64),),
    "avgpool_grad": ((32, 2048, 64),),
    "reflect_pad_grad": ((1024, 2048),),
    "resize_bilinear": ((32, 256, 64, 3), (32, 512, 128, 3)),
    "repeat_tile": ((2048, 1024),),
    "take_along": ((2048, 4096), (2048, 64)),
    "reverse_cumsum": ((256, 512),),
}


def define(c, sizes=SMALL, suffix=""):
    jax, jnp = c.jax, c.jnp
    S, sds = c.S, c.sds

    def prog(fn):  # Registered as NAME + suffix, its shapes from sizes[NAME].
        return c.prog(fn, name=fn.__name__ + suffix)

    # 1. stride-2 convolution, gradients w.r.t. input and kernel, spatial dim split ----------
    @prog
    def strided_conv_grad():
        def loss(x, k):
            y = jax.lax.conv_general_dilated(x, k, (2,), "SAME",
                                             dimension_numbers=("NWC", "WIO", "NWC"))
            return jnp.sum(jnp.tanh(y))
        f = jax.jit(jax.grad(loss, argnums=(0, 1)),
                    in_shardings=(S("data", "model", None), S()),
                    out_shardings=(S("data", "model", None), S()))
        return f, tuple(sds(z) for z in sizes["strided_conv_grad"])

    # 2. max-pool gradient (overlapping windows) on a split spatial dim ---------------------
    @prog
    def maxpool_grad():
        def loss(x):
            y = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 1), (1, 2, 1), "SAME")
            return jnp.sum(y * y)
        f = jax.jit(jax.grad(loss), in_shardings=(S("data", "model", None),),
                    out_shardings=S("data", "model", None))
        return f, (sds(sizes["maxpool_grad"][0]),)

    # 3. average-pool gradient (padded windows, stride 2) ------------------------------------
    @prog
    def avgpool_grad():
        def loss(x):
            y = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 1), (1, 2, 1), "VALID") / 2.0
            return jnp.sum(jnp.sin(y))
        f = jax.jit(jax.grad(loss), in_shardings=(S("data", "model", None),),
                    out_shardings=S("data", "model", None))
        return f, (sds(sizes["avgpool_grad"][0]),)

    # 4. reflect padding along a split dim (and its gradient) --------------------------------
    @prog
    def reflect_pad_grad():
        def loss(x):
            y = jnp.pad(x, ((0, 0), (3, 3)), mode="reflect")
            return jnp.sum(jnp.cos(y))
        f = jax.jit(jax.value_and_grad(loss), in_shardings=(S("data", "model"),),
                    out_shardings=(S(), S("data", "model")))
        return f, (sds(sizes["reflect_pad_grad"][0]),)

    # 5. image resize (bilinear x2) on split height ------------------------------------------
    @prog
    def resize_bilinear():
        def f(x):
            return jax.image.resize(x, sizes["resize_bilinear"][1], "bilinear")
        f = jax.jit(f, in_shardings=(S("data", "model", None, None),),
                    out_shardings=S("data", "model", None, None))
        return f, (sds(sizes["resize_bilinear"][0]),)

    # 6. repeat / tile along a split dim -----------------------------------------------------
    @prog
    def repeat_tile():
        def f(x):
            return jnp.repeat(x, 2, axis=1) + jnp.tile(x, (1, 2))
        f = jax.jit(f, in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds(sizes["repeat_tile"][0]),)

    # 7. take_along_axis (per-row gather) with the gathered dim split ------------------------
    @prog
    def take_along():
        def f(x, i):
            return jnp.take_along_axis(x, i, axis=1)
        f = jax.jit(f, in_shardings=(S("data", "model"), S("data", None)),
                    out_shardings=S("data", None))
        return f, (sds(sizes["take_along"][0]), sds(sizes["take_along"][1], jnp.int32))

    # 8. reverse cumulative sum along a split dim --------------------------------------------
    @prog
    def reverse_cumsum():
        def f(x):
            return jnp.flip(jnp.cumsum(jnp.flip(x, axis=1), axis=1), axis=1)
        f = jax.jit(f, in_shardings=(S("data", "model"),), out_shardings=S("data", "model"))
        return f, (sds(sizes["reverse_cumsum"][0]),)
