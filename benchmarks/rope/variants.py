"""The RoPE variants of the benchmark suite (issue table), forward and
backward, as FusionDefinitions with PyTorch references.

Every variant has a config (layout, sizes, how cos/sin arrive), a forward
fusion, a backward fusion (the gradient, derived by hand: rotate_half's
transpose is cat(y2, -y1), written with slices and pads; GQA repeats sum
over the repeat axis), an eager PyTorch forward, and an autograd reference
for the backward. Any dtype: bf16 for benchmarks, fp32 for correctness
checks on small shapes (tests/python/test_rope_variants.py).
"""

import torch

from nvfuser import DataType

TORCH = {DataType.BFloat16: torch.bfloat16, DataType.Float: torch.float32,
         DataType.Half: torch.float16}

# layout: "litgpt" (fused interleaved qkv), "hf" (separate q/k/v),
# "hf_fused" (one contiguous [q|k|v]); cos: "TR" / "1TR" input tables,
# "input" ([B,T,D] inputs that require grad), "ingraph" (from position ids),
# "pairs" ([T, D/2] tables rotating adjacent pairs x[2k], x[2k+1]: Meta's
# Llama reference, torchtune and GPT-J; every other variant rotates halves).
CONFIGS = {
    "llama_2_7b_litgpt": dict(layout="litgpt", B=2, H=32, G=32, D=128,
                              R=128, cos="TR", ret_v=False),
    "llama_3_8b_litgpt": dict(layout="litgpt", B=2, H=32, G=8, D=128, R=128,
                              cos="TR", ret_v=False),
    "gemma_2_9b_litgpt": dict(layout="litgpt", B=1, H=16, G=8, D=256, R=256,
                              cos="1TR", ret_v=True),
    "mistral_7b_litgpt": dict(layout="litgpt", B=1, H=32, G=8, D=128, R=128,
                              cos="1TR", ret_v=True),
    "phi_3_5_mini_litgpt": dict(layout="litgpt", B=1, H=32, G=32, D=96,
                                R=96, cos="1TR", ret_v=True),
    "qwen2_5_7b_hf": dict(layout="hf", B=1, H=28, G=4, D=128, R=128,
                          cos="input"),
    "mistral_nemo_hf": dict(layout="hf", B=1, H=32, G=8, D=128, R=128,
                            cos="ingraph"),
    "phi_3_5_mini_hf": dict(layout="hf_fused", B=1, H=32, G=32, D=96, R=96,
                            cos="ingraph"),
    "partial_rotary": dict(layout="litgpt", B=1, H=32, G=32, D=80, R=32,
                           cos="1TR", ret_v=False),
    "llama_2_7b_pairs": dict(layout="hf", B=1, H=32, G=32, D=128, R=128,
                             cos="pairs"),
}


def small(name, T=8):
    """The variant at test size: same layout and head ratios, few heads."""
    c = dict(CONFIGS[name])
    ratio = c["H"] // c["G"]
    c["G"] = 2 if ratio > 1 else 4
    c["H"] = c["G"] * (2 if ratio > 1 else 1)
    c["R"] = 8 if c["R"] < c["D"] else 16
    c["D"] = 20 if c["R"] == 8 else 16
    c["T"] = T
    return c


def sized(name, T):
    return dict(CONFIGS[name], T=T)


def num_outputs(c):
    """Forward outputs (so backward output gradients): q, k[, v]."""
    return 3 if (c["layout"] != "litgpt" or c["ret_v"]) else 2


def _storage(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:  # torch 1.13
        return t.storage().data_ptr()


def minimal_bytes(c, mode, inputs, outputs):
    """Bytes a perfect implementation moves: every output written once and
    every input element that matters read once. A LitGPT forward that
    returns only q and k never needs the v third of the fused qkv; an
    output that is a view of an input (v with as many kv heads as query
    heads) is neither read nor written."""
    def nbytes(ts):
        return sum(t.numel() * t.element_size() for t in ts
                   if hasattr(t, "element_size"))
    tensors = [t for t in inputs if hasattr(t, "element_size")]
    views = [o for o in outputs if hasattr(o, "element_size") and
             any(_storage(o) == _storage(t) for t in tensors)]
    total = nbytes(inputs) + nbytes(outputs) - 2 * nbytes(views)
    if mode == "fwd" and c["layout"] == "litgpt" and not c["ret_v"]:
        qkv = inputs[0]
        total -= nbytes([qkv]) * c["G"] // (c["H"] + 2 * c["G"])
    return total


# ---------------------------------------------------------------- helpers
def _rot(fd, x, shape, dt):
    d = shape[-1]
    zeros = [0] * len(shape)
    x1 = fd.ops.slice(x, zeros, shape[:-1] + [d // 2])
    x2 = fd.ops.slice(x, zeros[:-1] + [d // 2], shape)
    return fd.ops.cat([fd.ops.cast(fd.ops.neg(x2), dt), x1], dim=-1)


def _rot_t(fd, y, shape):
    """Transpose of rotate_half: cat(y2, -y1), with slices and pads."""
    d = shape[-1]
    zeros = [0] * len(shape)
    y1 = fd.ops.slice(y, zeros, shape[:-1] + [d // 2])
    y2 = fd.ops.slice(y, zeros[:-1] + [d // 2], shape)
    return fd.ops.add(fd.ops.pad(y2, [0, d // 2]),
                      fd.ops.pad(fd.ops.neg(y1), [d // 2, 0]))


def _rope(fd, x, cos, sin, shape, dt):
    out = fd.ops.add(fd.ops.mul(x, cos), fd.ops.mul(_rot(fd, x, shape, dt),
                                                    sin))
    return fd.ops.cast(out, dt)


def _rope_grad(fd, g, cos, sin, shape, dt):
    out = fd.ops.add(fd.ops.mul(g, cos), _rot_t(fd, fd.ops.mul(g, sin),
                                                shape))
    return fd.ops.cast(out, dt)


def _on_rotated_dims(fd, t, c, fn):
    """fn on the first R of D dims of t [B,H,T,D]; the tail passes through
    (partial rotary). The same shape in the forward and the backward."""
    B, T, H, D, R = (c[k] for k in "BTHDR")
    if R == D:
        return fn(t)
    head = fd.ops.slice(t, [0] * 4, [B, H, T, R])
    tail = fd.ops.slice(t, [0, 0, 0, R], [B, H, T, D])
    return fd.ops.cat([fn(head), tail], dim=-1)


def _cos_sin_tables(fd, c, shape, dt):
    """cos/sin inputs of the LitGPT layouts, broadcast to shape [B,H,T,R]."""
    T, R = c["T"], c["R"]
    tshape = [T, R] if c["cos"] == "TR" else [1, T, R]
    dims = [2, 3] if c["cos"] == "TR" else [1, 2, 3]
    cos = fd.define_tensor(shape=tshape, dtype=dt)
    sin = fd.define_tensor(shape=tshape, dtype=dt)
    return (lambda: fd.ops.broadcast_in_dim(cos, shape, dims),
            lambda: fd.ops.broadcast_in_dim(sin, shape, dims))


def _ingraph_cos_sin(fd, c, dt):
    """HF's rotary embedding from position ids: freqs = pos x inv_freq (a
    K=1 outer product), emb = cat(freqs, freqs), cos/sin in fp32, cast."""
    B, T, D = c["B"], c["T"], c["D"]
    pos = fd.define_tensor(shape=[B, T], dtype=DataType.Int)
    inv = fd.define_tensor(shape=[D // 2], dtype=DataType.Float)
    p = fd.ops.broadcast_in_dim(fd.ops.cast(pos, DataType.Float),
                                [B, T, D // 2], [0, 1])
    f = fd.ops.broadcast_in_dim(inv, [B, T, D // 2], [2])
    emb = fd.ops.cat([fd.ops.mul(p, f)] * 2, dim=-1)
    return fd.ops.cast(fd.ops.cos(emb), dt), fd.ops.cast(fd.ops.sin(emb), dt)


def _hf_cos_sin(fd, c, dt):
    """cos/sin of the HF layouts ([B,T,D] inputs, or computed in the graph)
    and their head-broadcast [B,1,T,D] forms."""
    B, T, D = c["B"], c["T"], c["D"]
    if c["cos"] == "input":
        cos = fd.define_tensor(shape=[B, T, D], dtype=dt)
        sin = fd.define_tensor(shape=[B, T, D], dtype=dt)
    else:
        cos, sin = _ingraph_cos_sin(fd, c, dt)
    return (fd.ops.broadcast_in_dim(cos, [B, 1, T, D], [0, 2, 3]),
            fd.ops.broadcast_in_dim(sin, [B, 1, T, D], [0, 2, 3]))


def _pair_tables(fd, c, dt):
    """[T, D/2] cos and sin of the pair rotation."""
    T, D = c["T"], c["D"]
    return (fd.define_tensor(shape=[T, D // 2], dtype=dt),
            fd.define_tensor(shape=[T, D // 2], dtype=dt))


def _rotate_pairs(fd, x, cos, sin, shape, dt, sign):
    """x [B,n,T,D] viewed as [B,n,T,D/2,2]: each pair (a, b) becomes
    (a c - b s, b c + a s) (sign 1: the forward) or (a c + b s, b c - a s)
    (sign -1: its transpose, the gradient), as an FD author writes it:
    slices of the pair dim, cat, and the view back."""
    B, n, T, D = shape
    pairs = [B, n, T, D // 2, 2]
    xp = fd.ops.reshape(fd.ops.cast(x, DataType.Float), pairs)
    a = fd.ops.slice(xp, [0] * 5, pairs[:4] + [1])
    b = fd.ops.slice(xp, [0, 0, 0, 0, 1], pairs)

    def table(t):
        return fd.ops.broadcast_in_dim(fd.ops.cast(t, DataType.Float),
                                       pairs[:4] + [1], [2, 3])
    c, s = table(cos), table(sin)
    first, second = fd.ops.mul(a, c), fd.ops.mul(b, c)
    bs, as_ = fd.ops.mul(b, s), fd.ops.mul(a, s)
    if sign > 0:
        out = [fd.ops.sub(first, bs), fd.ops.add(second, as_)]
    else:
        out = [fd.ops.add(first, bs), fd.ops.sub(second, as_)]
    return fd.ops.cast(fd.ops.reshape(fd.ops.cat(out, dim=-1), shape), dt)


def _heads(fd, x, B, T, n, D):
    return fd.ops.permute(fd.ops.reshape(x, [B, T, n, D]), [0, 2, 1, 3])


def _unheads(fd, x, B, T, n, D):
    return fd.ops.reshape(fd.ops.permute(x, [0, 2, 1, 3]), [B, T, n * D])


def _sum_repeat(fd, g, c, dt):
    """[B,H,T,D] gradient of a GQA repeat -> [B,G,T,D]."""
    B, T, H, G, D = c["B"], c["T"], c["H"], c["G"], c["D"]
    if H == G:
        return g
    r = fd.ops.reshape(g, [B, G, H // G, T, D])
    return fd.ops.cast(fd.ops.sum(r, dims=[2]), dt)


# ---------------------------------------------------------------- forward
def define_forward(fd, c, dt=DataType.BFloat16):
    if c["layout"] == "litgpt":
        return _litgpt_forward(fd, c, dt)
    return _hf_forward(fd, c, dt)


def _litgpt_forward(fd, c, dt):
    B, T, H, G, D, R = (c[k] for k in "BTHGDR")
    per = H // G
    qkv = fd.define_tensor(shape=[B, T, (H + 2 * G) * D], dtype=dt)
    shape = [B, H, T, R]
    cos_b, sin_b = _cos_sin_tables(fd, c, shape, dt)
    x = fd.ops.permute(fd.ops.reshape(qkv, [B, T, G, per + 2, D]),
                       [0, 2, 3, 1, 4])
    q = fd.ops.slice(x, [0] * 5, [B, G, per, T, D])
    k = fd.ops.slice(x, [0, 0, per, 0, 0], [B, G, per + 1, T, D])
    v = fd.ops.slice(x, [0, 0, per + 1, 0, 0], [B, G, per + 2, T, D])
    if per > 1:
        k = fd.ops.expand(k, [B, G, per, T, D])
        v = fd.ops.expand(v, [B, G, per, T, D])
    q, k, v = (fd.ops.reshape(t, [B, H, T, D]) for t in (q, k, v))

    def rope(t):
        return _on_rotated_dims(fd, t, c, lambda h: _rope(
            fd, h, cos_b(), sin_b(), shape, dt))

    fd.add_output(rope(q))
    fd.add_output(rope(k))
    if c["ret_v"]:
        fd.add_output(v)


def _hf_forward(fd, c, dt):
    B, T, H, G, D = (c[k] for k in "BTHGD")
    if c["layout"] == "hf_fused":
        qkv = fd.define_tensor(shape=[B, T, (H + 2 * G) * D], dtype=dt)
        q_lin = fd.ops.slice(qkv, [0, 0, 0], [B, T, H * D])
        k_lin = fd.ops.slice(qkv, [0, 0, H * D], [B, T, (H + G) * D])
        v_lin = fd.ops.slice(qkv, [0, 0, (H + G) * D], [B, T, (H + 2 * G) * D])
    else:
        q_lin = fd.define_tensor(shape=[B, T, H * D], dtype=dt)
        k_lin = fd.define_tensor(shape=[B, T, G * D], dtype=dt)
        v_lin = fd.define_tensor(shape=[B, T, G * D], dtype=dt)
    if c["cos"] == "pairs":
        cos_t, sin_t = _pair_tables(fd, c, dt)

        def rope(x, shape):
            return _rotate_pairs(fd, x, cos_t, sin_t, shape, dt, 1)
    else:
        cos_u, sin_u = _hf_cos_sin(fd, c, dt)

        def rope(x, shape):
            return _rope(fd, x, cos_u, sin_u, shape, dt)
    q = rope(_heads(fd, q_lin, B, T, H, D), [B, H, T, D])
    k = rope(_heads(fd, k_lin, B, T, G, D), [B, G, T, D])
    v = _heads(fd, v_lin, B, T, G, D)

    def repeat(t):
        if G == H:
            return t
        t = fd.ops.broadcast_in_dim(t, [B, G, H // G, T, D], [0, 1, 3, 4])
        return fd.ops.reshape(t, [B, H, T, D])

    fd.add_output(q)
    fd.add_output(repeat(k))
    fd.add_output(repeat(v))


# ---------------------------------------------------------------- backward
def define_backward(fd, c, dt=DataType.BFloat16):
    if c["layout"] == "litgpt":
        return _litgpt_backward(fd, c, dt)
    return _hf_backward(fd, c, dt)


def _litgpt_backward(fd, c, dt):
    B, T, H, G, D, R = (c[k] for k in "BTHGDR")
    per = H // G
    full = [B, H, T, D]
    shape = [B, H, T, R]
    gq = fd.define_tensor(shape=full, dtype=dt)
    gk = fd.define_tensor(shape=full, dtype=dt)
    gv = fd.define_tensor(shape=full, dtype=dt) if c["ret_v"] else None
    cos_b, sin_b = _cos_sin_tables(fd, c, shape, dt)

    def grad(g):
        return _on_rotated_dims(fd, g, c, lambda h: _rope_grad(
            fd, h, cos_b(), sin_b(), shape, dt))

    def per_group(g, reduce):
        g = fd.ops.reshape(g, [B, G, per, T, D])
        if reduce:
            g = fd.ops.cast(fd.ops.sum(g, dims=[2], keepdim=True), dt)
        return g

    dq = per_group(grad(gq), False)
    dk = per_group(grad(gk), True)
    if gv is not None:
        dv = per_group(gv, True)
    else:
        dv = fd.ops.full([B, G, 1, T, D], 0.0, dt)
    dx = fd.ops.permute(fd.ops.cat([dq, dk, dv], dim=2), [0, 3, 1, 2, 4])
    fd.add_output(fd.ops.reshape(dx, [B, T, (H + 2 * G) * D]))


def _hf_backward(fd, c, dt):
    B, T, H, G, D = (c[k] for k in "BTHGD")
    full = [B, H, T, D]
    gq = fd.define_tensor(shape=full, dtype=dt)
    gk = fd.define_tensor(shape=full, dtype=dt)
    gv = fd.define_tensor(shape=full, dtype=dt)
    grads_cos = c["cos"] == "input"
    if grads_cos:
        q_lin = fd.define_tensor(shape=[B, T, H * D], dtype=dt)
        k_lin = fd.define_tensor(shape=[B, T, G * D], dtype=dt)
    if c["cos"] == "pairs":
        cos_t, sin_t = _pair_tables(fd, c, dt)

        def grad(g, shape):
            return _rotate_pairs(fd, g, cos_t, sin_t, shape, dt, -1)
    else:
        cos_u, sin_u = _hf_cos_sin(fd, c, dt)

        def grad(g, shape):
            return _rope_grad(fd, g, cos_u, sin_u, shape, dt)
    gk_sum = _sum_repeat(fd, gk, c, dt)
    dq = grad(gq, full)
    dk = grad(gk_sum, [B, G, T, D])
    dv = _sum_repeat(fd, gv, c, dt)
    outs = [_unheads(fd, dq, B, T, H, D), _unheads(fd, dk, B, T, G, D),
            _unheads(fd, dv, B, T, G, D)]
    if c["layout"] == "hf_fused":
        fd.add_output(fd.ops.cat(outs, dim=-1))
    else:
        for o in outs:
            fd.add_output(o)
    if grads_cos:
        # d/dcos of x*cos_u sums over the heads; d/dsin likewise with rot(x).
        q = _heads(fd, q_lin, B, T, H, D)
        k = _heads(fd, k_lin, B, T, G, D)

        def head_sum(a, x, n, mul_rot):
            t = _rot(fd, x, [B, n, T, D], dt) if mul_rot else x
            return fd.ops.sum(fd.ops.mul(a, t), dims=[1])

        dcos = fd.ops.add(head_sum(gq, q, H, False),
                          head_sum(gk_sum, k, G, False))
        dsin = fd.ops.add(head_sum(gq, q, H, True),
                          head_sum(gk_sum, k, G, True))
        fd.add_output(fd.ops.cast(dcos, dt))
        fd.add_output(fd.ops.cast(dsin, dt))


# ---------------------------------------------------------------- inputs
def _randn(shape, dt, device):
    return torch.randn(*shape, device=device, dtype=TORCH[dt])


def forward_inputs(c, dt=DataType.BFloat16, device="cpu"):
    B, T, H, G, D, R = (c[k] for k in "BTHGDR")
    if c["layout"] == "litgpt":
        t = [T, R] if c["cos"] == "TR" else [1, T, R]
        return [_randn([B, T, (H + 2 * G) * D], dt, device),
                _randn(t, dt, device), _randn(t, dt, device)]
    if c["layout"] == "hf_fused":
        ins = [_randn([B, T, (H + 2 * G) * D], dt, device)]
    else:
        ins = [_randn([B, T, H * D], dt, device),
               _randn([B, T, G * D], dt, device),
               _randn([B, T, G * D], dt, device)]
    if c["cos"] == "input":
        return ins + [_randn([B, T, D], dt, device),
                      _randn([B, T, D], dt, device)]
    if c["cos"] == "pairs":
        return ins + [_randn([T, D // 2], dt, device),
                      _randn([T, D // 2], dt, device)]
    return ins + _position_inputs(c, device)


def _position_inputs(c, device):
    B, T, D = c["B"], c["T"], c["D"]
    pos = torch.arange(T, device=device).repeat(B, 1)
    inv = 1.0 / (10000.0 ** (torch.arange(0, D, 2, device=device).float() / D))
    return [pos, inv]


def backward_inputs(c, dt=DataType.BFloat16, device="cpu", fwd=None):
    """Output gradients, then what the backward fusion reads besides them
    (the forward inputs it needs)."""
    B, T, H, D = c["B"], c["T"], c["H"], c["D"]
    grads = [_randn([B, H, T, D], dt, device) for _ in range(num_outputs(c))]
    fwd = fwd if fwd is not None else forward_inputs(c, dt, device)
    if c["layout"] == "litgpt":
        return grads + fwd[1:]            # cos, sin
    if c["cos"] == "input":
        return grads + [fwd[0], fwd[1], fwd[3], fwd[4]]  # q, k, cos, sin
    return grads + fwd[-2:]               # position ids, inv_freq


# ---------------------------------------------------------------- eager
def _eager_rot(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def _eager_rope(x, cos, sin):
    return x * cos + _eager_rot(x) * sin


def eager_forward(c, *ins, compute=torch.float32):
    """The module in PyTorch, computing in `compute`, outputs in the input
    dtype."""
    B, T, H, G, D, R = (c[k] for k in "BTHGDR")
    dt = ins[0].dtype
    if c["layout"] == "litgpt":
        qkv, cos, sin = ins
        per = H // G
        x = qkv.view(B, T, G, per + 2, D).permute(0, 2, 3, 1, 4)
        q, k, v = x.split((per, 1, 1), dim=2)
        k = k.expand(B, G, per, T, D)
        v = v.expand(B, G, per, T, D)
        q, k, v = (t.reshape(B, H, T, D) for t in (q, k, v))

        def rope(t):
            head = _eager_rope(t[..., :R].to(compute), cos.to(compute),
                               sin.to(compute)).to(dt)
            return torch.cat([head, t[..., R:]], dim=-1)

        outs = [rope(q), rope(k)]
        return outs + [v] if c["ret_v"] else outs
    if c["layout"] == "hf_fused":
        qkv = ins[0]
        q_lin, k_lin, v_lin = qkv.split((H * D, G * D, G * D), dim=-1)
        rest = ins[1:]
    else:
        q_lin, k_lin, v_lin = ins[:3]
        rest = ins[3:]
    if c["cos"] == "pairs":  # torchtune's RoPE
        cc, ss = (t.to(compute) for t in rest)

        def rope(x):
            xp = x.to(compute).reshape(*x.shape[:-1], -1, 2)
            return torch.stack([xp[..., 0] * cc - xp[..., 1] * ss,
                                xp[..., 1] * cc + xp[..., 0] * ss],
                               -1).flatten(3).to(dt)
    else:
        if c["cos"] == "input":
            cos, sin = rest
        else:
            pos, inv = rest
            freqs = pos[:, :, None].float() * inv[None, None, :]
            emb = torch.cat([freqs, freqs], dim=-1)
            cos, sin = emb.cos().to(dt), emb.sin().to(dt)
        cu, su = cos.unsqueeze(1).to(compute), sin.unsqueeze(1).to(compute)

        def rope(x):
            return _eager_rope(x.to(compute), cu, su).to(dt)

    def heads(x, n):
        return x.view(B, T, n, D).transpose(1, 2)

    q = rope(heads(q_lin, H))
    k = rope(heads(k_lin, G))
    v = heads(v_lin, G)

    def repeat(t):
        return t[:, :, None].expand(B, G, H // G, T, D).reshape(B, H, T, D)

    return [q, repeat(k), repeat(v)]


def grad_inputs(c):
    """Indices of the forward inputs the backward differentiates: the
    activations, and cos/sin only where the model computes them upstream
    (cos="input"). Tables, position ids and inv_freq are buffers: a
    backward that also differentiated them would add sums over the batch
    and heads that the backward fusion does not compute (the compiled and
    eager timings did, until session 11)."""
    wrt = [0] if c["layout"] in ("litgpt", "hf_fused") else [0, 1, 2]
    if c["cos"] == "input":
        wrt += [3, 4]
    return wrt


def requiring_grad(c, fwd_inputs, cast=None):
    """Fresh leaves of the forward inputs (cast to `cast` if given), the
    grad_inputs ones requiring grad; returns (inputs, those leaves)."""
    wrt = grad_inputs(c)
    ins = []
    for i, t in enumerate(fwd_inputs):
        t = t.detach().clone()
        if cast is not None and t.is_floating_point():
            t = t.to(cast)
        ins.append(t.requires_grad_(i in wrt))
    return ins, [ins[i] for i in wrt]


def autograd_backward(c, bwd_inputs, fwd_inputs):
    """The backward fusion's outputs computed by torch.autograd on
    eager_forward in float64."""
    n_grads = num_outputs(c)
    grads = [g.double() for g in bwd_inputs[:n_grads]]
    ins, wrt = requiring_grad(c, fwd_inputs, cast=torch.float64)
    outs = eager_forward(c, *ins, compute=torch.float64)
    torch.autograd.backward(outs[:n_grads], grads)
    return [t.grad for t in wrt]
