"""Calls of @triton.jit helpers on the CPU interpreter without patching triton.language again.

Triton 3.9's interpreter patches triton.language (every builtin of tl, tl.core, tl.tensor and
tl.math, found with inspect.getmembers) when a launch starts, undoes it when the launch ends, and
patches again at every call of a jitted helper inside the kernel (tl.max, tl.sum, a user's own
helper: once per program and call site). That repeat finds every builtin already patched and
changes nothing, yet costs about 3 ms: in the CPU run of the suite's softmax it was 12,305 repeats
in 63 calls, close to half of the run. A repeat is skipped when every language module the helper
sees is patched already (the launch's patch is in force until the launch ends); the launch's own
patch, and the patch of a language module it did not patch, are made as before. Installed by the
Triton backend's worker before the module snapshot, like fastdot."""
from __future__ import annotations

import inspect


class _Nothing:
    """The scope of a skipped repeat: nothing was patched, nothing to undo."""

    def restore(self) -> None:
        pass


def install() -> bool:
    """Wrap the interpreter's _patch_lang once; False where this Triton has none to wrap."""
    import triton.language as tl
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang", None)
    if original is None or getattr(original, "opforge_once", False):
        return original is not None
    languages = (tl, tl.core)

    def patched(module) -> bool:
        load = getattr(module, "load", None)
        return callable(load) and not tl.core.is_builtin(load)

    def _patch_lang(fn):
        seen = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in languages]
        if seen and all(patched(module) for module in seen):
            return _Nothing()
        return original(fn)

    _patch_lang.opforge_once = True
    interpreter._patch_lang = _patch_lang
    return True
