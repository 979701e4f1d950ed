"""What a candidate could change in the process without touching a tensor: the identity of every
attribute of the modules and classes a cheat would patch (ModuleSnapshot), and the process-wide
settings that change what a computation means (global_state). Both are taken before the candidate
runs and compared after; the guards (guards.py) watch the calls themselves."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import torch

WATCHED = ("builtins", "torch", "torch.Tensor", "torch.nn.functional", "torch.nn.Module", "torch.nn.modules.module",
           "torch.testing", "torch.cuda", "torch.autograd", "time", "opforge.harness.compare", "opforge.harness.guards", "opforge.harness.worker", "opforge.harness.checker")


def _import_module_of(path: str) -> None:
    """Import the longest importable module prefix of a dotted path (`triton.runtime.jit` of its
    `JITFunction`)."""
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:cut]))
            return
        except ImportError:
            continue


def _resolve(path: str) -> Any:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:cut]))
        if obj is not None:
            for part in parts[cut:]:
                obj = getattr(obj, part, None)
            return obj
    return None


# Set lazily by Python itself: copyreg caches __slotnames__ on a class the first time one is pickled,
# warnings.warn adds __warningregistry__ to the module that warned.
LAZY_ATTRS = {"__slotnames__", "__warningregistry__"}
# "module.attr" names the backend's own runtime rebinds at every launch (triton-ascend 3.2's
# interpreter), measured by the backend's worker setup: a candidate's change to one would be undone
# by the next launch, so it is not evidence either way.
REBOUND_EACH_LAUNCH: set[str] = set()
_GONE = object()  # what a removed attribute is compared as


# The code of the wrapper torch._disable_dynamo puts around a function (every such wrapper shares it).
_NO_DYNAMO_CODE = torch._disable_dynamo(lambda: None).__code__


def _kept_behind_dynamo(new: Any, old: Any) -> bool:
    """`new` is torch's own Dynamo-disabling wrapper around the very object that was there (`old`),
    so calling it does what that object did. Importing torch._dynamo rebinds
    torch.manual_seed so, and a candidate's process may import it without asking (torch's custom
    ops and Python decompositions do on their first call); not importing it up front saves 1.5 s."""
    if getattr(new, "__code__", None) is not _NO_DYNAMO_CODE:
        return False
    cells = dict(zip(new.__code__.co_freevars, new.__closure__ or ()))
    try:
        return "fn" in cells and cells["fn"].cell_contents is old
    except ValueError:  # an empty cell
        return False


class ModuleSnapshot:
    """Identity of every attribute of the modules and classes a cheat would patch; attributes
    added (but not lazily imported submodules) and removed count as much as replaced ones."""

    def __init__(self) -> None:
        import time  # noqa: F401  (make sure it is watched)

        from opforge.backends import watched_paths

        # Each backend's libraries too (Triton's language, its launcher classes), imported first: a module
        # not yet imported would show all its attributes as "added" later.
        extra = [path for path in watched_paths() if path not in WATCHED]
        for path in extra:
            _import_module_of(path)
        self.saved = {path: self._attributes(_resolve(path)) for path in (*WATCHED, *extra)}

    @staticmethod
    def _attributes(obj: Any) -> dict[str, tuple[Any, bool]]:
        """name -> (the object itself, is it a module). The objects are held, not their ids: one
        freed by the candidate could have its id taken by a replacement."""
        items = vars(obj) if isinstance(obj, (ModuleType, type)) else {}
        return {k: (v, isinstance(v, ModuleType)) for k, v in list(items.items())}

    def changes(self) -> list[str]:
        changed = []
        for path, before in self.saved.items():
            after = self._attributes(_resolve(path))
            changed += [f"{path}.{k}" for k, v in before.items() if after.get(k, (_GONE,))[0] is not v[0]
                        and f"{path}.{k}" not in REBOUND_EACH_LAUNCH and not _kept_behind_dynamo(after.get(k, (_GONE,))[0], v[0])]
            changed += [f"{path}.{k} (added)" for k, v in after.items()
                        if k not in before and not v[1] and k not in LAZY_ATTRS]
        return changed


def global_state() -> dict[str, Any]:
    """The process-wide settings that change what a computation means or how it is judged."""
    from torch.nn.modules import module as nn_module

    hooks = {name: len(getattr(nn_module, name, {}) or {}) for name in dir(nn_module)
             if name.startswith("_global_") and name.endswith("hooks")}
    return {
        "default_dtype": str(torch.get_default_dtype()),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "grad_enabled": torch.is_grad_enabled(),
        "torch_function_modes": torch._C._len_torch_function_stack(),
        "dispatch_modes": torch._C._len_torch_dispatch_stack(),
        **{f"nn.modules.module.{k}": v for k, v in hooks.items()},
    }


def state_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [f"{k} {before.get(k)!r} -> {after.get(k)!r}" for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)]
