"""One FusionDefinition executed from several threads at once, with
varying shapes (execute releases the GIL): every result right, every
signature cached exactly once, no crash. The executor cache once had no
lock and lost entries or crashed under this load."""

import threading

import torch

from nvfuser import DataType, FusionDefinition

THREADS = 8
CALLS = 25


def _softmaxish(fd):
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                         dtype=DataType.Float)
    v = x
    for _ in range(20):  # long enough that segmenting takes a while
        v = fd.ops.add(fd.ops.mul(v, x), x)
    s = fd.ops.sum(fd.ops.exp(x), [1], keepdim=True)
    fd.add_output(fd.ops.sub(v, s))


def _reference(x):
    v = x
    for _ in range(20):
        v = v * x + x
    return v - x.exp().sum(1, keepdim=True)


def _shape(tid, i):
    return (1 + (tid * 5 + i) % 13, 1 + (i * 7 + tid * 3) % 17)


def test_execute_from_many_threads_with_varying_shapes(device):
    with FusionDefinition() as fd:
        _softmaxish(fd)
    start = threading.Barrier(THREADS)
    failures = []

    def work(tid):
        g = torch.Generator().manual_seed(tid)
        start.wait()
        for i in range(CALLS):
            x = (torch.rand(*_shape(tid, i), generator=g) * 0.5).to(device)
            try:
                out, = fd.execute([x])
                if not torch.allclose(out, _reference(x), rtol=1e-4,
                                      atol=1e-4):
                    failures.append((tid, i, "wrong values"))
            except Exception as e:  # noqa: BLE001  (reported below)
                failures.append((tid, i, repr(e)))

    threads = [threading.Thread(target=work, args=(t,))
               for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    shapes = {_shape(t, i) for t in range(THREADS) for i in range(CALLS)}
    assert fd._fusion.num_cached_signatures() == len(shapes)
