# tests/gpu/jit.sh: a jit-compiled JAX function (and the jitted ops that make its inputs); prints
# a hash of its result, which must be the same with and without probes.
import hashlib

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def f(x, y):
    return jnp.sin(x) * y + 1.0


x = jnp.arange(1 << 20, dtype=jnp.float32) / 1000.0
y = jnp.ones(1 << 20, dtype=jnp.float32) * 2.0
r = np.asarray(f(x, y))
print("result", hashlib.sha256(r.tobytes()).hexdigest())
