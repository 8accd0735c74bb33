"""The FX fuzzer (fx_fuzz.py) in CI: 200 random programs, compiled and
compared with eager. A failure prints each failing seed with its program;
replay one with ``python tests/python/fx_fuzz.py --seed N``."""

import pytest

import fx_fuzz
from nvfuser.fx import TABLE

SEEDS = 200
CHUNK = 25


@pytest.mark.parametrize("first", range(0, SEEDS, CHUNK))
def test_random_graphs_match_eager(first):
    stats = fx_fuzz.run(range(first, first + CHUNK))
    assert not stats.failures, "\n\n".join(stats.failures)
    assert stats.regions >= stats.cases // 2  # they reach the compiler
    assert stats.skipped <= stats.cases // 5


def test_cases_are_reproducible():
    a, b = fx_fuzz.generate(7), fx_fuzz.generate(7)
    assert a.source == b.source and a.tracer == b.tracer
    assert all(x.equal(y) for x, y in zip(a.inputs, b.inputs))


def test_the_fuzzer_finds_integer_division_that_truncates(monkeypatch):
    # The bug of issue 18 item 4, planted again: the fuzzer must see it.
    def truncating_div(ctx, node, p):
        return ctx.broadcast_binary(ctx.fd.ops.div, p["self"], p["other"],
                                    node)
    monkeypatch.setitem(TABLE, "div", truncating_div)
    monkeypatch.setitem(TABLE, "true_divide", truncating_div)
    found = []
    for seed in range(400):
        try:
            fx_fuzz.run_case(fx_fuzz.generate(seed))
        except fx_fuzz.FuzzFailure as e:
            found.append(str(e))
            break
    assert found and "seed" in found[0] and "def f(" in found[0]


def test_the_fuzzer_finds_a_variant_reused_for_an_equal_number(monkeypatch):
    # The bug of session 24's probe, planted again: a region compared its
    # number arguments with ==, so 1.0 reused the translation made for 1.
    from nvfuser.fx import partition
    monkeypatch.setattr(partition, "_same_value", lambda a, b: a == b)
    found = []
    for seed in range(400):
        try:
            fx_fuzz.run_case(fx_fuzz.generate(seed))
        except fx_fuzz.FuzzFailure as e:
            found.append(str(e))
            break
        except fx_fuzz.FuzzSkip:
            pass
    assert found and "with numbers" in found[0], found


def test_some_cases_take_numbers_as_graph_inputs():
    stats = fx_fuzz.run(range(0, 100))
    assert stats.twins >= 5 and not stats.failures
