"""The static checks' lists of what Python candidates may reach: the allowed library modules, the
attributes denied by name, the call gadgets and the denied library paths (static_resolve.py reads them)."""
from __future__ import annotations

import re

# What real kernels reach, by import or as an attribute (tl.math, torch.nn...). Anything else (os, sys,
# time, torch.utils, torch.ops, triton.runtime, tl.core...) is refused, whatever the route to it.
ALLOWED_MODULES = frozenset({
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.cuda",
    "triton", "triton.language", "triton.language.math", "triton.language.random", "triton.language.extra",
    "triton.language.extra.libdevice", "triton.language.extra.cuda", "triton.language.extra.cuda.libdevice",
    "math", "typing", "functools", "itertools", "operator", "dataclasses", "__future__", "numbers", "enum",
})
# Denied by name on any object, resolvable or not (the root of `x.numpy()` is a runtime value).
FORBIDDEN_ATTRS = frozenset({
    "_C", "_dynamo", "_inductor", "_python_dispatch", "library", "compile", "manual_seed", "seed",
    "set_rng_state", "get_rng_state", "initial_seed", "Generator", "TorchDispatchMode",
    "TorchFunctionMode", "f_back", "f_globals", "f_locals", "gi_frame", "tb_frame", "modules",
    "cuda_graph", "CUDAGraph", "Event", "synchronize", "testing", "runtime", "knobs",
    # modules re-exported as attributes (torch.multiprocessing, torch.os...) reach what imports can't
    "multiprocessing", "os", "sys", "subprocess", "threading", "_thread", "ctypes", "builtins",
    "importlib", "time", "socket", "signal",
    # below the dispatcher: host copies, raw storage and pointers, subclass swaps
    "numpy", "tolist", "apply_", "map_", "map2_", "storage", "untyped_storage", "_typed_storage",
    "data_ptr", "share_memory_", "set_", "_make_subclass", "as_subclass",
    # work on another stream or in a graph escapes the timed stream; _sleep pads the reference's time
    "Stream", "ExternalStream", "stream", "set_stream", "current_stream", "default_stream", "graph",
    "graphs", "make_graphed_callables", "_sleep",
    # RNG state predicts the inputs as well as a seed does
    "default_generator", "default_generators", "manual_seed_all", "seed_all", "get_rng_state_all",
    "set_rng_state_all", "get_state", "set_state",
})
HOOK = re.compile(r"register_\w*hook")  # forward/backward/module/tensor hooks see every call
# Reading or writing attributes by a string, running code, reaching the interpreter: forbidden-call,
# referenced in any way (called, aliased, passed). The comment on each non-builtin says why.
CALL_GADGETS = (
    *(f"builtins.{name}" for name in (
        "getattr", "setattr", "delattr", "vars", "globals", "locals", "dir", "eval", "exec", "compile",
        "open", "__import__", "breakpoint", "input", "memoryview", "exit", "quit", "help",
        "classmethod")),  # classmethod hands a method its class, and through it unbound methods
    "operator.attrgetter", "operator.methodcaller",
    "typing.get_type_hints", "typing.ForwardRef",  # evaluate strings as code
    "functools.update_wrapper", "functools.wraps",  # copy attributes by name (setattr by another name)
    "dataclasses.make_dataclass",  # a class from strings, like type() with 3 args
)
# Library functions that change process-wide state or touch files: forbidden-attribute.
DENIED_PATHS = (
    "torch.load", "torch.save", "torch.from_file", "torch.set_default_dtype", "torch.set_default_device",
    "torch.set_default_tensor_type", "torch.set_float32_matmul_precision", "torch.set_flush_denormal",
    "torch.use_deterministic_algorithms",
)
