"""A small Llama-style causal LM, written after Hugging Face's
LlamaForCausalLM (RMSNorm, rotary embedding with rotate_half, grouped-query
attention with repeat_kv, SiLU-gated MLP, cross-entropy on shifted labels
with ignore_index) for CPU tests of the FX backend: transformers is not
installed here. Attention is scaled_dot_product_attention's math path
(torch 1.13 has no SDPA)."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class Config:
    vocab = 64
    hidden = 32
    heads = 4
    kv_heads = 2
    intermediate = 48
    eps = 1e-6
    rope_theta = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n) + 0.1 * torch.randn(n))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps)).to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rotary(nn.Module):
    def __init__(self, dim, theta):
        super().__init__()
        inv = 1.0 / theta ** (torch.arange(0, dim, 2).float() / dim)
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, positions):
        inv = self.inv_freq[None, :, None].float().expand(
            positions.shape[0], -1, 1)
        freqs = (inv @ positions[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def repeat_kv(x, n):
    b, h, t, d = x.shape
    if n == 1:
        return x
    return x[:, :, None, :, :].expand(b, h, n, t, d).reshape(b, h * n, t, d)


def sdpa_math(q, k, v):
    """Causal scaled_dot_product_attention as its math path computes it."""
    t, s = q.size(-2), k.size(-2)
    causal = torch.ones(t, s, dtype=torch.bool).tril()
    w = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.size(-1)))
    w = w.masked_fill(~causal, float("-inf"))
    return torch.softmax(w, dim=-1) @ v


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c, self.d = c, c.hidden // c.heads
        self.q_proj = nn.Linear(c.hidden, c.heads * self.d, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * self.d, bias=False)
        self.o_proj = nn.Linear(c.heads * self.d, c.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        shape = (b, t, -1, self.d)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n = self.c.heads // self.c.kv_heads
        o = sdpa_math(q, repeat_kv(k, n), repeat_kv(v, n))
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1).contiguous())


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.up_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.down_proj = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden, c.eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaLike(nn.Module):
    """forward(input_ids, labels) -> loss, as model(input_ids=ids,
    labels=ids).loss: logits in float, labels shifted left, the last
    position and label -100 ignored."""

    def __init__(self, c=Config, layers=1):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(layers)])
        self.norm = RMSNorm(c.hidden, c.eps)
        self.rotary = Rotary(c.hidden // c.heads, c.rope_theta)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)

    def forward(self, input_ids, labels):
        x = self.embed_tokens(input_ids)
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        cos, sin = self.rotary(x, positions)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x)).float()
        shifted = F.pad(labels, (0, 1), value=-100)[..., 1:]
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               shifted.reshape(-1), ignore_index=-100)


def example_batch(c=Config, batch=2, seq=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, c.vocab, (batch, seq), generator=g)
    labels = ids.clone()
    labels[0, 2] = -100  # a padded position
    return ids, labels
