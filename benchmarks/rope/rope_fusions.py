"""RoPE modules of real LLMs written as FusionDefinitions, with PyTorch
references. Shared by tests/python/test_rope_segmentation.py and the RoPE
benchmarks.

Each ``define_*`` takes a FusionDefinition and a config dict and defines the
fusion; each ``eager_*`` computes the same outputs with PyTorch;
``make_inputs_*`` makes inputs of the config's shapes.
"""

import torch

from nvfuser import DataType

BF16 = DataType.BFloat16


def _rotate_half(fd, x, shape):
    """cat(-x2, x1) along the last dim (bf16 in, bf16 out)."""
    d = shape[-1]
    zeros = [0] * len(shape)
    x1 = fd.ops.slice(x, zeros, shape[:-1] + [d // 2])
    x2 = fd.ops.slice(x, zeros[:-1] + [d // 2], shape)
    return fd.ops.cat([fd.ops.cast(fd.ops.neg(x2), BF16), x1], dim=-1)


def _apply_rope(fd, x, cos, sin, shape):
    """x*cos + rotate_half(x)*sin, cast back to bf16."""
    out = fd.ops.add(fd.ops.mul(x, cos),
                     fd.ops.mul(_rotate_half(fd, x, shape), sin))
    return fd.ops.cast(out, BF16)


# --------------------------------------------------------------------------
# Hugging Face style (Llama / Qwen2 / Mistral): separate q/k/v projections
# [B,T,H*D] -> view [B,T,H,D] -> transpose [B,H,T,D]; cos/sin [B,T,D]
# unsqueezed once and shared by q and k; repeat_kv after the rotation.
# --------------------------------------------------------------------------
def define_hf_forward(fd, cfg):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    q_lin = fd.define_tensor(shape=[B, T, H * D], dtype=BF16)
    k_lin = fd.define_tensor(shape=[B, T, G * D], dtype=BF16)
    v_lin = fd.define_tensor(shape=[B, T, G * D], dtype=BF16)
    cos = fd.define_tensor(shape=[B, T, D], dtype=BF16)
    sin = fd.define_tensor(shape=[B, T, D], dtype=BF16)

    def heads(x, n):
        x = fd.ops.reshape(x, [B, T, n, D])
        return fd.ops.permute(x, [0, 2, 1, 3])

    cos_u = fd.ops.broadcast_in_dim(cos, [B, 1, T, D], [0, 2, 3])
    sin_u = fd.ops.broadcast_in_dim(sin, [B, 1, T, D], [0, 2, 3])
    q = _apply_rope(fd, heads(q_lin, H), cos_u, sin_u, [B, H, T, D])
    k = _apply_rope(fd, heads(k_lin, G), cos_u, sin_u, [B, G, T, D])
    v = heads(v_lin, G)

    def repeat_kv(x):
        if G == H:
            return x
        x = fd.ops.broadcast_in_dim(x, [B, G, H // G, T, D], [0, 1, 3, 4])
        return fd.ops.reshape(x, [B, H, T, D])

    fd.add_output(q)
    fd.add_output(repeat_kv(k))
    fd.add_output(repeat_kv(v))


def make_inputs_hf_forward(cfg, device="cpu"):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]

    def r(*s):
        return torch.randn(*s, device=device, dtype=torch.bfloat16)
    return [r(B, T, H * D), r(B, T, G * D), r(B, T, G * D), r(B, T, D),
            r(B, T, D)]


def eager_hf_forward(cfg, q_lin, k_lin, v_lin, cos, sin):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]

    def rot(x):
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return torch.cat([-x2, x1], dim=-1)

    def heads(x, n):
        return x.view(B, T, n, D).transpose(1, 2)

    cos_u, sin_u = cos.unsqueeze(1), sin.unsqueeze(1)

    def rope(x):
        return (x.float() * cos_u.float() + rot(x).float() *
                sin_u.float()).to(torch.bfloat16)

    def repeat_kv(x):
        return x[:, :, None].expand(B, G, H // G, T, D).reshape(B, H, T, D)

    return [rope(heads(q_lin, H)), repeat_kv(rope(heads(k_lin, G))),
            repeat_kv(heads(v_lin, G))]


# --------------------------------------------------------------------------
# LitGPT style: fused qkv [B,T,(H+2G)*D] interleaved per query group,
# reshape -> permute -> split -> expand k/v -> reshape -> rope on q and k.
# cos/sin [T,D] broadcast per use, as a traced LitGPT module does.
# --------------------------------------------------------------------------
def define_litgpt_forward(fd, cfg):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    R = cfg.get("R", D)  # rotated dims; the tail is passed through
    per = H // G
    qkv = fd.define_tensor(shape=[B, T, (H + 2 * G) * D], dtype=BF16)
    cos = fd.define_tensor(shape=[T, R], dtype=BF16)
    sin = fd.define_tensor(shape=[T, R], dtype=BF16)
    x = fd.ops.reshape(qkv, [B, T, G, per + 2, D])
    x = fd.ops.permute(x, [0, 2, 3, 1, 4])  # [B, G, per+2, T, D]
    q = fd.ops.slice(x, [0, 0, 0, 0, 0], [B, G, per, T, D])
    k = fd.ops.slice(x, [0, 0, per, 0, 0], [B, G, per + 1, T, D])
    v = fd.ops.slice(x, [0, 0, per + 1, 0, 0], [B, G, per + 2, T, D])
    if per > 1:
        k = fd.ops.expand(k, [B, G, per, T, D])
        v = fd.ops.expand(v, [B, G, per, T, D])
    q = fd.ops.reshape(q, [B, H, T, D])
    k = fd.ops.reshape(k, [B, H, T, D])
    v = fd.ops.reshape(v, [B, H, T, D])
    shape = [B, H, T, R]

    def bcast(t):
        return fd.ops.broadcast_in_dim(t, shape, [2, 3])

    def rope(t):
        if R == D:
            return _apply_rope(fd, t, bcast(cos), bcast(sin), shape)
        head = fd.ops.slice(t, [0, 0, 0, 0], shape)
        tail = fd.ops.slice(t, [0, 0, 0, R], [B, H, T, D])
        roped = _apply_rope(fd, head, bcast(cos), bcast(sin), shape)
        return fd.ops.cat([roped, tail], dim=-1)

    fd.add_output(rope(q))
    fd.add_output(rope(k))
    if cfg.get("return_v", False):
        fd.add_output(v)


def make_inputs_litgpt_forward(cfg, device="cpu"):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    R = cfg.get("R", D)

    def r(*s):
        return torch.randn(*s, device=device, dtype=torch.bfloat16)
    return [r(B, T, (H + 2 * G) * D), r(T, R), r(T, R)]


def _litgpt_heads(cfg, qkv):
    """Eager split of the fused qkv into q, k, v of [B,H,T,D]."""
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    per = H // G
    x = qkv.view(B, T, G, per + 2, D).permute(0, 2, 3, 1, 4)
    q, k, v = x.split((per, 1, 1), dim=2)
    k = k.expand(B, G, per, T, D)
    v = v.expand(B, G, per, T, D)
    return [t.reshape(B, H, T, D) for t in (q, k, v)]


def _eager_rope(t, cos, sin):
    half = t.shape[-1] // 2
    return t * cos + torch.cat([-t[..., half:], t[..., :half]], dim=-1) * sin


def eager_litgpt_forward(cfg, qkv, cos, sin):
    q, k, v = _litgpt_heads(cfg, qkv)
    R = cos.shape[-1]

    def rope(t):
        roped = _eager_rope(t[..., :R].float(), cos.float(),
                            sin.float()).to(torch.bfloat16)
        return torch.cat([roped, t[..., R:]], dim=-1)

    outs = [rope(q), rope(k)]
    if cfg.get("return_v", False):
        outs.append(v)
    return outs


# --------------------------------------------------------------------------
# LitGPT backward: gradients of q and k (and v) back to the fused qkv.
# The transpose of rotate_half is built with slices and pads; k and v sum
# over the GQA repeat axis; the three are concatenated, permuted back and
# reshaped to [B,T,(H+2G)*D].
# --------------------------------------------------------------------------
def define_litgpt_backward(fd, cfg):
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    per = H // G
    shape = [B, H, T, D]
    gq = fd.define_tensor(shape=shape, dtype=BF16)
    gk = fd.define_tensor(shape=shape, dtype=BF16)
    gv = fd.define_tensor(shape=shape, dtype=BF16)
    cos = fd.define_tensor(shape=[T, D], dtype=BF16)
    sin = fd.define_tensor(shape=[T, D], dtype=BF16)

    def bcast(t):
        return fd.ops.broadcast_in_dim(t, shape, [2, 3])

    def rope_grad(g):
        # d/dx [x*cos + rot(x)*sin] = g*cos + rot^T(g*sin)
        gs = fd.ops.mul(g, bcast(sin))
        zeros = [0, 0, 0, 0]
        first = fd.ops.slice(gs, zeros, [B, H, T, D // 2])
        second = fd.ops.slice(gs, [0, 0, 0, D // 2], shape)
        rot_t = fd.ops.add(fd.ops.pad(second, [0, D // 2]),
                           fd.ops.pad(fd.ops.neg(first), [D // 2, 0]))
        out = fd.ops.add(fd.ops.mul(g, bcast(cos)), rot_t)
        return fd.ops.cast(out, BF16)

    dq = fd.ops.reshape(rope_grad(gq), [B, G, per, T, D])
    dk = fd.ops.reshape(rope_grad(gk), [B, G, per, T, D])
    dk = fd.ops.cast(fd.ops.sum(dk, dims=[2], keepdim=True), BF16)
    dv = fd.ops.reshape(gv, [B, G, per, T, D])
    dv = fd.ops.cast(fd.ops.sum(dv, dims=[2], keepdim=True), BF16)
    dx = fd.ops.cat([dq, dk, dv], dim=2)  # [B, G, per+2, T, D]
    dx = fd.ops.permute(dx, [0, 3, 1, 2, 4])
    fd.add_output(fd.ops.reshape(dx, [B, T, (H + 2 * G) * D]))


def make_inputs_litgpt_backward(cfg, device="cpu"):
    B, T, H, D = cfg["B"], cfg["T"], cfg["H"], cfg["D"]

    def r(*s):
        return torch.randn(*s, device=device, dtype=torch.bfloat16)
    return [r(B, H, T, D), r(B, H, T, D), r(B, H, T, D), r(T, D), r(T, D)]


def eager_litgpt_backward(cfg, gq, gk, gv, cos, sin):
    """The same gradient through torch.autograd on the eager forward."""
    B, T, H, G, D = cfg["B"], cfg["T"], cfg["H"], cfg["G"], cfg["D"]
    qkv = torch.zeros(B, T, (H + 2 * G) * D, dtype=torch.float32,
                      device=gq.device, requires_grad=True)
    outs = eager_litgpt_forward_float(cfg, qkv, cos.float(), sin.float())
    torch.autograd.backward(outs, [gq.float(), gk.float(), gv.float()])
    return [qkv.grad]


def eager_litgpt_forward_float(cfg, qkv, cos, sin):
    """The LitGPT forward in float32, returning q, k and v (for autograd)."""
    q, k, v = _litgpt_heads(cfg, qkv)
    return [_eager_rope(q, cos, sin), _eager_rope(k, cos, sin), v]


VARIANTS = {
    "hf_forward": (define_hf_forward, make_inputs_hf_forward,
                   eager_hf_forward),
    "litgpt_forward": (define_litgpt_forward, make_inputs_litgpt_forward,
                       eager_litgpt_forward),
    "litgpt_backward": (define_litgpt_backward, make_inputs_litgpt_backward,
                        eager_litgpt_backward),
}
