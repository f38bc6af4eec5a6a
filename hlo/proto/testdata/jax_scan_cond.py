"""Writes jax_scan_cond.pb (HloModuleProto) and jax_scan_cond.hlo (the same module as text).

A lax.scan (a while whose body and condition XLA lists as called_computation_ids [body,
condition]) followed by a lax.cond on a computed predicate (a conditional with
branch_computations). Made with jax 0.10.2: `python3 jax_scan_cond.py` in this folder.
"""
import jax
import jax.numpy as jnp
from jax import lax


def f(x):
    def body(carry, row):
        return carry + jnp.sin(row), carry * 2

    carry, rows = lax.scan(body, jnp.zeros(3), x)
    out = lax.cond(carry.sum() > 0, lambda a: a * 2, lambda a: a - 1, carry)
    return out, rows


hlo = jax.jit(f).lower(jnp.ones((4, 3))).compiler_ir("hlo")
with open("jax_scan_cond.pb", "wb") as out:
    out.write(hlo.as_serialized_hlo_module_proto())
with open("jax_scan_cond.hlo", "w") as out:
    out.write(hlo.as_hlo_text())
