"""The models model_bench.py trains: transformers decoder families built
from a config alone (no download), at the benchmark's sizes, deterministic
(dropouts off), in the requested dtype."""
import collections
import contextlib
import copy

import torch

from bench_utils import error_info

HEAD_DIM = "<hidden // heads>"  # an extra config value computed per run

# name: (config class, model class, extra config kwargs, has GQA kv heads).
# All decoder-only families transformers ships that build from a config
# alone; head_dim is pinned where a family's default is not hidden//heads.
MODELS = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}, True),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}, True),
    "mistral": ("MistralConfig", "MistralForCausalLM", {}, True),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": HEAD_DIM},
              True),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": HEAD_DIM},
              True),
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": HEAD_DIM},
               True),
    "gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM",
               {"head_dim": HEAD_DIM}, True),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {}, True),
    "olmo": ("OlmoConfig", "OlmoForCausalLM", {}, True),
    "olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {}, True),
    "granite": ("GraniteConfig", "GraniteForCausalLM", {}, True),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM", {}, True),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", {}, False),
}
DEFAULT_MODELS = "llama,qwen2,mistral,qwen3,gemma2,phi3,olmo2,granite"
BACKENDS = ("eager", "inductor", "nvfuser")
SIZES = {  # --quick: smoke-run sizes
    "full": dict(layers=2, hidden=2048, heads=16, kv_heads=4,
                 intermediate=5632, vocab=32000, seq=2048, batch=2, reps=20),
    "quick": dict(layers=2, hidden=512, heads=8, kv_heads=2,
                  intermediate=1408, vocab=8192, seq=256, batch=2, reps=5),
}
DROPOUTS = ("attention_dropout", "hidden_dropout", "resid_pdrop",
            "embd_pdrop", "attn_pdrop", "summary_first_dropout",
            "classifier_dropout", "mlp_dropout", "embedding_dropout",
            "hidden_dropout_prob", "attention_probs_dropout_prob")
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16,
          "fp32": torch.float32}
def make_config(name, a):
    import transformers
    cfg_name, _, extra, gqa = MODELS[name]
    cls = getattr(transformers, cfg_name)
    kw = dict(vocab_size=a.vocab, hidden_size=a.hidden,
              intermediate_size=a.intermediate, num_hidden_layers=a.layers,
              num_attention_heads=a.heads,
              max_position_embeddings=max(4096, 2 * a.seq))
    if gqa:
        kw["num_key_value_heads"] = a.kv_heads
    for k, v in extra.items():
        kw[k] = a.hidden // a.heads if v == HEAD_DIM else v
    cfg = cls(**kw)
    # Deterministic steps (so gradients compare), token ids in the vocab
    # (Phi-3's pad id 32000 is outside a 32000 vocab).
    for attr in DROPOUTS:
        v = getattr(cfg, attr, None)
        if isinstance(v, float) and v:
            setattr(cfg, attr, 0.0)
    for attr in ("pad_token_id", "bos_token_id", "eos_token_id"):
        v = getattr(cfg, attr, None)
        if isinstance(v, int) and not isinstance(v, bool) and v >= a.vocab:
            setattr(cfg, attr, a.vocab - 1)
        elif isinstance(v, (list, tuple)):
            setattr(cfg, attr, [min(x, a.vocab - 1) for x in v])
    if a.no_cache:
        cfg.use_cache = False
    return cfg


def _device_ctx(device):
    # torch >= 2.0: parameters are created on the device directly.
    try:
        dev = torch.device(device)
        if hasattr(dev, "__enter__"):
            return dev
    except (TypeError, RuntimeError):
        pass
    return contextlib.nullcontext()


def build_model(name, a, device):
    """(model, how it was built): weights initialized under seed 0, in the
    dtype (default dtype set while building, as from_pretrained does: the
    rotary inv_freq stays float32), with the attention implementation."""
    import transformers
    model_cls = getattr(transformers, MODELS[name][1])
    cfg = make_config(name, a)
    dtype = DTYPES[a.dtype]
    errors = []
    model = how = None
    for kw in (dict(attn_implementation=a.attn, dtype=dtype),
               dict(attn_implementation=a.attn, torch_dtype=dtype)):
        torch.manual_seed(0)
        try:
            with _device_ctx(device):
                model = model_cls._from_config(copy.deepcopy(cfg), **kw)
            how = "%s._from_config(%s)" % (model_cls.__name__,
                                            ", ".join(sorted(kw)))
            break
        except Exception as e:  # noqa: BLE001 (older/newer signatures)
            errors.append(error_info(e)["error"])
    if model is None:
        torch.manual_seed(0)
        try:
            cfg._attn_implementation = a.attn
        except Exception as e:  # noqa: BLE001
            errors.append(error_info(e)["error"])
        with _device_ctx(device):
            model = model_cls(cfg).to(dtype)
        how = "%s(config).to(dtype)" % model_cls.__name__
    model = model.to(device)
    model.train()
    info = dict(
        built_by=how, build_errors=errors,
        attn_implementation=getattr(model.config, "_attn_implementation",
                                    None),
        params=sum(p.numel() for p in model.parameters()),
        param_dtypes=dict(collections.Counter(
            str(p.dtype) for p in model.parameters())),
        use_cache=getattr(model.config, "use_cache", None),
        transformers=transformers.__version__)
    return model, info


def fresh_copy(base):
    try:
        return copy.deepcopy(base)
    except Exception:  # noqa: BLE001: rebuild from the state instead
        m = type(base)(base.config).to(next(base.parameters()).device)
        m.load_state_dict(base.state_dict())
        return m.train()
