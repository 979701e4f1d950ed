"""vLLM's own layers call this package's kernels (copied verbatim into every exported package as
<package>/_vllm.py; plugins.register() calls install() in every process vLLM starts).

An op stands for an engine op by its spec's OPFORGE["implements"] key (configs/<op>.json) and the
contract's signature (ARITY; docs/engines.md). install() registers with CustomOp.register_oot a
subclass of each in-tree layer an op covers (RMSNorm, SiluAndMul, GeluAndMul, RotaryEmbedding, and
their subclasses that run the same forward code): every forward_* vLLM dispatches to calls
torch.ops.<package>.<op>, else the in-tree method it overrides, with one log line per layer and
reason (eps, dtypes or device not verified, has_weight=False, key None...). Other classes
(GemmaRMSNorm...) keep vLLM's code, silently. The rms_norm ops are also the vLLM IR provider
"<package>", used when chosen with ir_op_priority. Importing this module imports neither vLLM nor
the package's ops; traced by torch.compile, the checks are the dtypes only and nothing is logged
(the op still runs its reference where its kernel does not apply)."""
import importlib
import logging

import torch

PACKAGE = __name__.rpartition(".")[0]
log = logging.getLogger(f"vllm.{PACKAGE}")  # vLLM's handler prints it (vLLM's level, INFO by default)

ARITY = {"vllm:rms_norm": 2, "vllm:fused_add_rms_norm": 3, "vllm:silu_and_mul": 1, "vllm:gelu_and_mul": 1,
         "vllm:gelu_tanh_and_mul": 1, "vllm:rotary_embedding:neox": 4, "vllm:rotary_embedding:gptj": 4}
EPS_KEYS = ("vllm:rms_norm", "vllm:fused_add_rms_norm")
GELU = {"none": "vllm:gelu_and_mul", "tanh": "vllm:gelu_tanh_and_mul"}
ROPE = {True: "vllm:rotary_embedding:neox", False: "vllm:rotary_embedding:gptj"}
METHODS = ("forward_native", "forward_cpu", "forward_cuda", "forward_hip", "forward_xpu", "forward_tpu", "forward_oot")
_said: set = set()
_installed: list = []


class Entry:
    """One op of the package standing for an engine op: its config, verified dtype tuples and init args."""

    def __init__(self, op: str, config: dict):
        self.op, self.config = op, config
        sets = config.get("dtype_sets") or [[sig["dtype"] for sig in config["inputs"]]]
        self.dtypes = [tuple(getattr(torch, d) if d else None for d in s) for s in sets]
        args, kwargs = config.get("init_args") or [[], {}]
        self.init = list(args) + list(kwargs.values())
        self.reference, self.seen = None, {}  # the spec's Model, built when first needed; shapes checked

    def eps(self):
        return self.init[0] if len(self.init) == 1 and isinstance(self.init[0], (int, float)) else None


def contract_problem(key: str, entry: Entry) -> str:
    """Why an op that says it implements `key` cannot stand for it ("" when it can)."""
    inputs = [sig for sig in entry.config["inputs"]]
    if len(inputs) != ARITY[key] or any(sig["kind"] != "tensor" for sig in inputs):
        return f"takes {len(inputs)} inputs ({', '.join(s['kind'] for s in inputs)}), {key} takes {ARITY[key]} tensors"
    if key in EPS_KEYS and entry.eps() is None:
        return f"its init args {entry.init} are not one eps, as {key} has"
    if key in GELU.values() and entry.init not in ([], [next(a for a, k in GELU.items() if k == key)]):
        return f"its init args {entry.init} are not {key}'s"
    if key not in EPS_KEYS and key not in GELU.values() and entry.init:
        return f"its init args {entry.init} are not {key}'s (none)"
    return ""


def find_ops(configs: dict) -> tuple[dict, list]:
    """({key: [Entry]} of the keys this adapter knows, notes on ops that declare one and do not fit),
    in the package's op order; ops that implement no vLLM key are ignored."""
    found, notes = {}, []
    for op, config in configs.items():
        for key in config.get("implements") or ():
            if not key.startswith("vllm:"):
                continue
            if key not in ARITY:
                notes.append(f"{op}: {key} is not an engine op this adapter knows ({', '.join(ARITY)})")
                continue
            entry = Entry(op, config)
            problem = contract_problem(key, entry)
            if problem:
                notes.append(f"{op}: declares {key} but {problem}")
            else:
                found.setdefault(key, []).append(entry)
    return found, notes


def eps_problem(entries: list, eps: float, key: str) -> tuple[list, str]:
    """The entries verified with this eps, else ([], why)."""
    fit = [e for e in entries if e.eps() == eps]
    if entries and not fit:
        return [], f"eps {eps:g}, {key} verified with eps {' or '.join(f'{e.eps():g}' for e in entries)} only"
    return fit, ""


def _select(entry: Entry, args: tuple) -> str:
    runtime = importlib.import_module(f"{PACKAGE}._runtime")
    return runtime.select(entry.config, args)[1]


def rejects(entry: Entry, args: tuple) -> str:
    """Why the op's own reference rejects arguments of these shapes (the package runtime's check on
    fake tensors, cached per shapes), or "": a kernel must not run where its spec raises (a spec
    that covers full rotary only, say), and the op's fallback would raise too."""
    runtime = importlib.import_module(f"{PACKAGE}._runtime")
    if entry.reference is None:
        spec = importlib.import_module(f"{PACKAGE}.references.{entry.op}")
        entry.reference = spec.Model(*(spec.get_init_inputs() if hasattr(spec, "get_init_inputs") else []))
    return runtime.shapes_problem(entry.reference, runtime.state_of(entry.reference), args, entry.seen)


def geometry(entries: list, shapes: list, key: str) -> tuple[list, str]:
    """The entries whose reference takes a layer's geometry (arguments of these shapes in the entry's
    first verified dtypes), else ([], why): checked once, when the layer is built."""
    fit, why = [], []
    for entry in entries:
        reason = rejects(entry, tuple(torch.zeros(s, dtype=d) for s, d in zip(shapes, entry.dtypes[0])))
        if reason:
            why.append(f"{entry.op}: {reason}")
        else:
            fit.append(entry)
    return fit, ("; ".join(why) if entries and not fit else "")


def pick(entries: list, args: tuple, key: str) -> tuple:
    """(the entry whose kernel applies to args, "") or (None, why not). Traced (torch.compile): by the
    dtypes alone, the op itself guarding the rest; eager: the package's own select() too (device,
    ranks, contiguity, grad)."""
    given = tuple(a.dtype for a in args)
    reasons = []
    for entry in entries:
        if given not in entry.dtypes:
            continue
        if torch.compiler.is_compiling():
            return entry, ""
        reason = _select(entry, args)
        if not reason:
            return entry, ""
        reasons.append(f"{entry.op}: {reason}")
    if not entries:
        return None, f"no op of {PACKAGE} implements {key}"
    if reasons:
        return None, "; ".join(reasons)
    shown = " or ".join(f"({', '.join(str(d).removeprefix('torch.') for d in s)})" for e in entries for s in e.dtypes)
    return None, f"dtypes ({', '.join(str(d).removeprefix('torch.') for d in given)}), {key} verified for {shown}"


def fall_back(layer: str, reason: str) -> None:
    """One log line per (layer, reason) per process; none while traced."""
    if torch.compiler.is_compiling() or (layer, reason) in _said:
        return
    _said.add((layer, reason))
    log.info("%s: vLLM's %s runs its own code: %s", PACKAGE, layer, reason)


def call(entry: Entry, *args):
    """torch.ops.<package>.<op>(*args)."""
    return getattr(getattr(torch.ops, PACKAGE), entry.op)(*args)


# ---- the layers' calls in the contract's shapes -------------------------------------------------

def rms_norm(layer, x, residual):
    """(out, "") or (None, why the kernel does not apply); x [..., H] is flattened to [T, H]."""
    key = "vllm:rms_norm" if residual is None else "vllm:fused_add_rms_norm"
    problem = layer._kg_problem or layer._kg_eps_problem[key]
    if problem:
        return None, problem
    shape, weight = x.shape, layer.weight.data
    flat = (x.reshape(-1, shape[-1]).contiguous(),) + (() if residual is None else
                                                       (residual.reshape(-1, shape[-1]).contiguous(),))
    entry, why = pick(layer._kg_ops[key], flat + (weight,), key)
    if entry is None:
        return None, why
    out = call(entry, *flat, weight)
    return (out.view(shape) if residual is None else (out[0].view(shape), out[1].view(residual.shape))), ""


def and_mul(layer, key: str, x):
    entries = layer._kg_ops.get(key, [])
    flat = x.reshape(-1, x.shape[-1]).contiguous()
    entry, why = pick(entries, (flat,), key)
    if entry is None:
        return None, why
    return call(entry, flat).view(*x.shape[:-1], x.shape[-1] // 2), ""


def rotary(layer, positions, query, key):
    """(query', key') out of place, or (None, why)."""
    name = ROPE[bool(layer.is_neox_style)]
    if key is None:
        return None, "key is None (the kernel rotates a query and a key)"
    if getattr(layer, "cos_sin_cache", None) is None or layer._kg_static[name]:
        return None, layer._kg_static.get(name) or "the layer has no cos_sin_cache (init_cache=False)"
    cache = layer._match_cos_sin_cache_dtype(query)
    if cache.dim() != 2 or cache.shape[-1] != layer.rotary_dim:
        return None, f"cos_sin_cache {list(cache.shape)} is not [positions, rotary_dim {layer.rotary_dim}]"
    positions = positions.flatten()
    tokens, size = positions.shape[0], layer.head_size
    q = query.reshape(tokens, -1, size).contiguous()
    k = key.reshape(tokens, -1, size).contiguous()
    args = (positions.long(), q, k, cache.contiguous())
    entry, why = pick(layer._kg_ops.get(name, []), args, name)
    if entry is None:
        return None, why
    q2, k2 = call(entry, *args)
    return (q2.reshape(query.shape), k2.reshape(key.shape)), ""


# ---- registration with vLLM ---------------------------------------------------------------------

def _subclass(base, found: dict, run, setup):
    """A subclass of the in-tree layer `base` whose every forward_* calls run(self, method, ...):
    `run` returns the result, or None to use the in-tree method (after a log line)."""

    def __init__(self, *args, **kwargs):
        base.__init__(self, *args, **kwargs)
        setup(self, found)

    ns = {"__init__": __init__, "__module__": __name__, "__doc__": f"vLLM's {base.__name__} calling {PACKAGE}'s ops."}
    for method in METHODS:
        if hasattr(base, method):
            ns[method] = _forward(method, run)
    return type(base.__name__, (base,), ns)


def _forward(method: str, run):
    def forward(self, *args, **kwargs):
        out = run(self, method, *args, **kwargs)
        return out if out is not None else getattr(super(type(self)._kg_class, self), method)(*args, **kwargs)

    forward.__name__ = method
    return forward


def _setup_norm(layer, found):
    problems = []
    if not layer.has_weight:
        problems.append("has_weight=False (the kernel multiplies by a weight)")
    if layer.variance_size_override is not None:
        problems.append(f"variance_size_override={layer.variance_size_override} (the kernel reduces the whole row)")
    layer._kg_problem = "; ".join(problems)
    layer._kg_ops, layer._kg_eps_problem = {}, {}
    h = layer.hidden_size
    for key, shapes in zip(EPS_KEYS, ([(1, h), (h,)], [(1, h), (1, h), (h,)])):
        fit, why = eps_problem(found.get(key, []), layer.variance_epsilon, key)
        layer._kg_ops[key], layer._kg_eps_problem[key] = geometry(fit, shapes, key) if fit else (fit, why)


def _run_norm(self, method, x, residual=None, *rest, **kwargs):
    if rest or kwargs:
        return _declined(self, "called with arguments beyond (x, residual)")
    out, why = rms_norm(self, x, residual)
    key = "vllm:rms_norm" if residual is None else "vllm:fused_add_rms_norm"
    return out if out is not None else _declined(self, why, f"{type(self).__name__} ({key})")


def _run_act(self, method, x, *rest, **kwargs):
    approximate = getattr(self, "approximate", None) if self._kg_gelu else None
    if self._kg_gelu and approximate not in GELU:
        return _declined(self, f"approximate={approximate!r}")
    if rest or kwargs:
        return _declined(self, "called with arguments beyond (x,)")
    out, why = and_mul(self, GELU[approximate] if self._kg_gelu else "vllm:silu_and_mul", x)
    return out if out is not None else _declined(self, why)


def _setup_for(keys: tuple):
    def setup(layer, found):
        layer._kg_ops = {k: found.get(k, []) for k in keys}
    return setup


def _setup_rope(layer, found):
    layer._kg_ops, layer._kg_static = {}, {}
    cache = getattr(layer, "cos_sin_cache", None)
    for key in ROPE.values():
        shapes = [(1,), (1, 1, layer.head_size), (1, 1, layer.head_size), tuple(getattr(cache, "shape", ()))]
        ops = found.get(key, [])
        layer._kg_ops[key], layer._kg_static[key] = geometry(ops, shapes, key) if cache is not None else (ops, "")


def _run_rope(self, method, positions, query, key=None, *rest, **kwargs):
    if rest or kwargs:
        return _declined(self, "called with arguments beyond (positions, query, key), e.g. offsets")
    out, why = rotary(self, positions, query, key)
    if out is None:
        return _declined(self, why)
    if method == "forward_native":
        return out
    # vLLM's other forward_* rotate query and key in place (and return them): so do these
    query.copy_(out[0])
    key.copy_(out[1])
    return query, key


def _declined(layer, why: str, name: str | None = None):
    fall_back(name or type(layer).__name__, why)
    return None


def _layers(found: dict) -> list:
    """(in-tree modules, class name, run, setup, keys) of the layers this adapter can replace."""
    layers = "vllm.model_executor.layers."
    # The rotary package first: importing it imports every variant, so family() sees them
    return [((layers + "layernorm",), "RMSNorm", _run_norm, _setup_norm, EPS_KEYS),
            ((layers + "activation",), "SiluAndMul", _run_act, _setup_for(("vllm:silu_and_mul",)), ("vllm:silu_and_mul",)),
            ((layers + "activation",), "GeluAndMul", _run_act, _setup_for(tuple(GELU.values())), tuple(GELU.values())),
            ((layers + "rotary_embedding", layers + "rotary_embedding.base"), "RotaryEmbedding", _run_rope,
             _setup_rope, tuple(ROPE.values()))]


INHERITED = METHODS + ("forward", "forward_static")


def family(base, taken: dict, notes: list) -> list:
    """`base` and its subclasses imported by now that run exactly its forward code
    (Llama3RotaryEmbedding, YaRNScalingRotaryEmbedding... differ only in the cos_sin_cache they
    compute, which the op takes as an input): vLLM replaces classes by exact name, so each is
    registered under its own. A subclass with a forward of its own keeps vLLM's code; a name in
    `taken` (replaced by another plugin) is left to it, with a note."""
    found, seen, todo = [], set(), [base]
    while todo:
        cls = todo.pop(0)
        todo += cls.__subclasses__()
        if cls is not base and any(getattr(cls, m, None) is not getattr(base, m, None) for m in INHERITED):
            continue
        if cls.__module__ == __name__ or cls.__name__ in seen:  # a replacement of ours; a name twice
            continue
        seen.add(cls.__name__)
        if cls.__name__ in taken:
            notes.append(f"{cls.__name__}: already replaced by {taken[cls.__name__].__module__}; left as it is")
            continue
        found.append(cls)
    return found


def _in_tree(modules: tuple, name: str, notes: list):
    """vLLM's class `name` from the first of `modules` having it (places move), or None with a note."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    notes.append(f"{name}: not found in this vLLM ({', '.join(modules)}); left as it is")
    return None


def configs() -> dict:
    package = importlib.import_module(PACKAGE)
    runtime = importlib.import_module(f"{PACKAGE}._runtime")
    return {op: runtime.load_json("configs", f"{op}.json") for op in package.OPS}


def install() -> dict:
    """Replace vLLM's layers (and register the IR providers) for the keys this package's ops
    implement; once per process. Returns {"layers": {class: [op, ...]}, "ir": [...], "notes": [...]}."""
    if _installed:
        return _installed[0]
    from vllm.model_executor.custom_op import CustomOp, op_registry_oot

    found, notes = find_ops(configs())
    done = {"layers": {}, "also": {}, "ir": [], "notes": notes}
    for modules, name, run, setup, keys in _layers(found):
        ops = [e.op for k in keys for e in found.get(k, [])]
        if not ops:
            continue
        base = _in_tree(modules, name, notes)
        if base is None:
            continue
        for in_tree in family(base, op_registry_oot, notes):
            cls = _subclass(in_tree, found, run, setup)
            cls._kg_class, cls._kg_gelu = cls, name == "GeluAndMul"
            CustomOp.register_oot(name=in_tree.__name__)(cls)
            if in_tree is base:
                done["layers"][name] = list(dict.fromkeys(ops))
            else:
                done["also"].setdefault(name, []).append(in_tree.__name__)
    done["ir"] = importlib.import_module(f"{PACKAGE}._vllm_ir").register(found, notes)
    _installed.append(done)
    layers = ", ".join(f"{k} ({', '.join(v)})" + (f" and its subclasses {', '.join(done['also'][k])}"
                                                  if done["also"].get(k) else "")
                       for k, v in done["layers"].items()) or "none"
    ir = ", ".join(done["ir"]) or "none"
    log.info("%s: vLLM layers calling its kernels: %s; vLLM IR provider %r for: %s (chosen with ir_op_priority)%s",
             PACKAGE, layers, PACKAGE, ir, "".join(f"; {n}" for n in notes))
    return done
