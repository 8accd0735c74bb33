"""The model benchmark's report: the Markdown tables and the JSON file
(benchmarks/model_bench.py measures, this writes)."""

import collections
import json
import math
import os
import re

from bench_utils import fmt_measure

KINDS = [  # kernel kinds of the train-step table, first match wins
    ("memcpy/memset", r"^(Memcpy|Memset)"),
    ("ours", r"^nvfuser_"),
    ("triton", r"^triton"),
    ("attention", r"flash|fmha|attention|attn|sdpa|cudnn"),
    ("gemm", r"gemm|cutlass|nvjet|xmma|cublas|matmul|splitK"),
    ("aten copy/elementwise", r"elementwise|CatArray|copy|fill"),
    ("aten reduce/softmax", r"reduce|softmax|Softmax|norm"),
]
KIND_NAMES = [k for k, _ in KINDS] + ["other"]


def kind_of(name):
    for kind, pattern in KINDS:
        if re.search(pattern, name):
            return kind
    return "other"


def by_kind(by_name):
    """{kind: [us per call, launches per call]} of profile_kernels'
    by_name."""
    out = collections.OrderedDict((k, [0.0, 0]) for k in KIND_NAMES)
    for name, (us, n) in (by_name or {}).items():
        row = out[kind_of(name)]
        row[0] += us
        row[1] += n
    return out


# ------------------------------------------------------------ the models
def _short(r):
    out = {k: r.get(k) for k in ("first_call_s", "loss_rel_diff",
                                 "worst_grad_rel_l2", "graph_breaks",
                                 "graphs", "error") if r.get(k) is not None}
    for k in ("train", "infer"):
        if isinstance(r.get(k), dict):
            out[k] = fmt_measure(r[k])
    return out


# ------------------------------------------------------------- reporting
def _e(x, fmt="%.1e"):
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return fmt % x


def _cell(s):
    return str(s).replace("|", "/").replace("\n", " ")


def markdown(rows, meta):
    out = _header(meta)
    for section in (_main_rows, _warnings, _kinds_table, _dynamic_table,
                    _fallbacks_table, _breakdown_table):
        section(rows, out)
    return "\n".join(out) + "\n"


def _header(meta):
    """The title, the run's settings and the main table's head."""
    a = meta["args"]
    return ["# Model benchmark: transformers causal LMs through torch.compile",
            "",
            "%s; %d layers, hidden %d, %d heads (%d KV), intermediate %d, "
            "vocab %d, %s, attention %s, input_ids [%d, %d]%s; %d reps; "
            "torch %s, transformers %s, %s." % (
                meta["date"], a["layers"], a["hidden"], a["heads"],
                a["kv_heads"], a["intermediate"], a["vocab"], a["dtype"],
                a["attn"], a["batch"], a["seq"],
                ", use_cache=False" if a["no_cache"] else "", a["reps"],
                meta["torch"], meta.get("transformers") or "?", meta["gpu"]),
            "",
            "Train step: grads set to None, `loss = model(input_ids=ids, "
            "labels=ids).loss; loss.backward()`. ms: CUDA-event median (L2 "
            "flushed); in parentheses GPU kernel ms and kernels per call "
            "from the profiler. Inference: `model(input_ids=ids)` under "
            "torch.no_grad through the same compiled module (dynamo "
            "recompiles it for grad mode off). Graph breaks and graphs: "
            "dynamo's counters over both. Loss and gradient differences "
            "against eager's first step; eager's row is its own run-to-run "
            "difference.",
            "",
            "| model | backend | first call s | train ms (kernel ms, kernels) "
            "| infer ms (kernel ms, kernels) | graph breaks | graphs | loss "
            "rel diff | worst grad rel L2 (param) | notes |",
            "|---|---|---|---|---|---|---|---|---|---|"]


def _main_rows(rows, out):
    """A row per model and backend."""
    for r in rows:
        if "error" in r and "train" not in r:
            out.append("| %s | %s | ERROR (%s) %s |  |  |  |  |  |  |  |" % (
                r["model"], r["backend"], r.get("error_stage", "?"),
                _cell(r["error"][:160])))
            continue
        notes = []
        if "error" in r:
            notes.append("ERROR (%s) %s" % (r.get("error_stage"),
                                            r["error"][:120]))
        if r.get("grad_diff_vs_inductors") is not None:
            notes.append("grad diff %.2fx inductor's" %
                         r["grad_diff_vs_inductors"])
        if r.get("logits_rel_l2") is not None:
            notes.append("logits rel L2 %.1e" % r["logits_rel_l2"])
        if r.get("warnings"):
            notes.append("WARNING (below the table)")
        fb = r.get("fallbacks") or {}
        if fb.get("region_fallback_calls"):
            notes.append("%d region calls fell back to eager" %
                         fb["region_fallback_calls"])
        if r.get("infer", {}).get("error"):
            notes.append("infer ERROR %s" % r["infer"]["error"][:80])
        grad = "-"
        if r.get("worst_grad_param") is not None:
            grad = "%s (%s)" % (_e(r.get("worst_grad_rel_l2")),
                                r["worst_grad_param"])
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["backend"], _e(r.get("first_call_s"), "%.2f"),
            fmt_measure(r.get("train")),
            fmt_measure(r.get("infer")) if "ms" in (r.get("infer") or {})
            else "ERROR" if r.get("infer") else "-",
            r.get("graph_breaks", "-"), r.get("graphs", "-"),
            _e(r.get("loss_rel_diff")), _cell(grad),
            _cell("; ".join(notes))))


def _warnings(rows, out):
    """The rows' sanity warnings, below the table."""
    warnings = [w for r in rows for w in r.get("warnings", [])]
    if warnings:
        out.append("")
        out += warnings


def _kinds_table(rows, out):
    """Train step GPU time by kernel kind."""
    kinds = [r for r in rows if (r.get("train") or {}).get("kinds")]
    if kinds:
        out += ["", "### Train step GPU time by kernel kind (us per step, "
                "launches)", "",
                "| model | backend | " + " | ".join(KIND_NAMES) + " |",
                "|---|---|" + "---|" * len(KIND_NAMES)]
        for r in kinds:
            k = r["train"]["kinds"]
            cells = " | ".join("%.0f (%s)" % (k[n][0], k[n][1])
                               if k[n][1] else "-" for n in KIND_NAMES)
            out.append("| %s | %s | %s |" % (r["model"], r["backend"], cells))


def _dynamic_table(rows, out):
    """The second shape's rows (--dynamic)."""
    dyn = [r for r in rows if r.get("dynamic")]
    if dyn:
        out += ["", "### Second shape (--dynamic)", "",
                "| model | backend | batch, seq | ran | first call s | new "
                "graphs | verdict | loss rel diff vs eager | region calls "
                "fell back |", "|---|---|---|---|---|---|---|---|---|"]
        for r in dyn:
            d = r["dynamic"]
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["model"], r["backend"], d["shape"],
                "yes" if d.get("ran") else _cell("no: " + d.get("error", "")
                                                  [:100]),
                _e(d.get("first_call_s"), "%.2f"), d.get("new_graphs"),
                d.get("verdict"), _e(d.get("loss_rel_diff")),
                d.get("region_fallback_calls", "-")))


def _fallbacks_table(rows, out):
    """The ATen ops our backend left to eager."""
    fbs = [r for r in rows if isinstance(r.get("fallbacks"), dict) and
           r["fallbacks"].get("graphs")]
    if fbs:
        out += ["", "### nvfuser: ATen ops left to eager (all graphs of the "
                "case; reasons in the JSON)", "",
                "| model | graphs (regions) | coverage | eager ops |",
                "|---|---|---|---|"]
        for r in fbs:
            f = r["fallbacks"]
            ops = ", ".join("%s x%d" % kv for kv in
                            list(f["eager_ops"].items())[:20])
            graphs = ", ".join("%s %s" % (g.get("kind", "?"),
                                          g.get("regions"))
                               for g in f.get("graphs", []))
            cov = ("%.0f%% of nodes in regions" % (100 * f["coverage"])
                   if f.get("coverage") is not None else "-")
            out.append("| %s | %s | %s | %s |" % (r["model"], graphs, cov,
                                                  _cell(ops)))


def _breakdown_table(rows, out):
    """The longest kernels (--breakdown)."""
    bds = [r for r in rows if r.get("breakdown")]
    if bds:
        out += ["", "### Train step kernels, longest first (--breakdown)", "",
                "| model | backend | us per step | launches | kernel |",
                "|---|---|---|---|---|"]
        for r in bds:
            for k, us, n in r["breakdown"]:
                out.append("| %s | %s | %.1f | %s | %s |" % (
                    r["model"], r["backend"], us, n, _cell(k[:110])))


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return str(x)


def write(rows, meta, a, final):
    for path in (a.md, a.json):
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
    meta = dict(meta, complete=final)
    with open(a.json, "w") as f:
        json.dump(_json_safe(dict(meta=meta, rows=rows)), f, indent=1)
    md = markdown(rows, meta)
    with open(a.md, "w") as f:
        f.write(md)
    return md
