"""Demo: a rotary position embedding (RoPE) fusion defined with the nvFuser
Python API, run by nvfuser-lite and checked against PyTorch eager.

Runs on the GPU when one is present, else on the CPU."""

import argparse
import time

import torch

from nvfuser import DataType, FusionDefinition


def define_rope(fd, B, H, T, D, dtype):
    """q[B,H,T,D] and cos/sin[T,D]: out = q*cos + rotate_half(q)*sin."""
    q = fd.define_tensor(shape=[B, H, T, D], dtype=dtype)
    cos = fd.define_tensor(shape=[T, D], dtype=dtype)
    sin = fd.define_tensor(shape=[T, D], dtype=dtype)
    cos_b = fd.ops.broadcast_in_dim(cos, shape=[B, H, T, D],
                                    broadcast_dims=[2, 3])
    sin_b = fd.ops.broadcast_in_dim(sin, shape=[B, H, T, D],
                                    broadcast_dims=[2, 3])
    half = D // 2
    x1 = fd.ops.slice(q, [0, 0, 0, 0], [B, H, T, half])
    x2 = fd.ops.slice(q, [0, 0, 0, half], [B, H, T, D])
    rot = fd.ops.cat([fd.ops.cast(fd.ops.neg(x2), dtype), x1], dim=-1)
    out = fd.ops.add(fd.ops.mul(q, cos_b), fd.ops.mul(rot, sin_b))
    fd.add_output(fd.ops.cast(out, dtype))


def eager_rope(q, cos, sin):
    half = q.shape[-1] // 2
    rot = torch.cat([-q[..., half:], q[..., :half]], dim=-1)
    return (q.float() * cos.float() + rot.float() * sin.float()).to(q.dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--head-dim", type=int, default=64)
    args = parser.parse_args()
    B, H, T, D = args.batch, args.heads, args.seq, args.head_dim
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16

    with FusionDefinition() as fd:
        define_rope(fd, B, H, T, D, DataType.BFloat16)
    print("Fusion IR:")
    print(fd)

    q = torch.randn(B, H, T, D, device=device, dtype=dtype)
    cos = torch.randn(T, D, device=device, dtype=dtype)
    sin = torch.randn(T, D, device=device, dtype=dtype)
    start = time.perf_counter()
    (out,) = fd.execute([q, cos, sin])
    first = time.perf_counter() - start
    ref = eager_rope(q, cos, sin)
    err = (out.float() - ref.float()).abs().max().item()
    print("device: %s  shape: %s  max abs error vs eager: %.3g" %
          (device, list(out.shape), err))
    print("first call (define-to-result) %.1f ms" % (first * 1e3))
    if device == "cuda":
        reps = 50
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            fd.execute([q, cos, sin])
        torch.cuda.synchronize()
        per = (time.perf_counter() - t0) / reps
        nbytes = (q.numel() * 2 + cos.numel() * 2 * 2 + out.numel() * 2)
        print("steady state %.1f us/call, %.1f GB/s over minimal bytes" %
              (per * 1e6, nbytes / per / 1e9))
    ok = err <= 1e-2
    print("RESULT:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
