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


def first_failure(seeds):
    """The message of the first seed that fails, else None."""
    for seed in seeds:
        try:
            fx_fuzz.run_case(fx_fuzz.generate(seed))
        except fx_fuzz.FuzzFailure as e:
            return str(e)
        except fx_fuzz.FuzzSkip:
            pass
    return None


def test_the_fuzzer_finds_integer_division_that_truncates(monkeypatch):
    # The bug of issue 18 item 4, planted again: the fuzzer must see it.
    def truncating_div(ctx, node, p):
        return ctx.broadcast_binary(ctx.fd.ops.div, p["self"], p["other"],
                                    node)
    monkeypatch.setitem(TABLE, "div", truncating_div)
    monkeypatch.setitem(TABLE, "true_divide", truncating_div)
    found = first_failure(range(400))
    assert found and "seed" in found and "def f(" in found


def test_the_fuzzer_finds_a_variant_reused_for_an_equal_number(monkeypatch):
    # The bug of session 24's probe, planted again: a region compared its
    # number arguments with ==, so 1.0 reused the translation made for 1.
    from nvfuser.fx import partition
    monkeypatch.setattr(partition, "_same_value", lambda a, b: a == b)
    found = first_failure(range(400))
    assert found and "with numbers" in found, found


def test_the_fuzzer_finds_an_output_left_as_a_view_of_its_transpose(
        monkeypatch):
    # The bug e84a5bf fixed, planted again: a region output promised
    # transposed that a matmul in the region also reads was written
    # row-major, returned as a view and copied by the layout check.
    from nvfuser.fx import partition
    monkeypatch.setattr(partition, "_early_layouts", lambda *a: {})
    found = first_failure(range(100))
    assert found and "promised transposed" in found, found


def test_some_cases_take_numbers_as_graph_inputs():
    stats = fx_fuzz.run(range(0, 100))
    assert stats.twins >= 5 and not stats.failures


def test_seed_8977_addcmul_then_frac_matches_eager():
    # Session 24's campaign: addcmul rounded its product before the add
    # (ATen's CPU kernel does one fma) and frac() showed that ulp 300
    # times over.
    case = fx_fuzz.generate(8977)
    assert "addcmul" in case.source and "frac" in case.source
    fx_fuzz.run_case(case)
