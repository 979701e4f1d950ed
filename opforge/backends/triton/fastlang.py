"""Two things Triton's CPU interpreter does for nothing, skipped: re-patching triton.language at
each call of a @triton.jit helper, and computing integer-overflow checks whose assert is off.

Triton 3.9's interpreter patches triton.language (every builtin of tl, tl.core, tl.tensor and
tl.math, found with inspect.getmembers) when a launch starts, undoes it when the launch ends, and
patches again at every call of a jitted helper inside the kernel (tl.max, tl.sum, a user's own
helper: once per program and call site). That repeat finds every builtin already patched and
changes nothing, yet costs about 3 ms: in the CPU run of the suite's softmax it was 12,305 repeats
in 63 calls, close to half of the run. A repeat is skipped when every language module the helper
sees is patched already (the launch's patch is in force until the launch ends); the launch's own
patch, and the patch of a language module it did not patch, are made as before.

Every int32 `+`, `-` and `*` of a kernel (its index arithmetic) also runs Triton's overflow
sanitizer: both operands cast to int64, the operation, two comparisons and an `and`, handed to
device_assert, which returns at once unless the options ask for debug, and the interpreter's
options never do (InterpreterOptions(debug=False) is built once and not changed). That dead work
was a third of the CPU run of the expert's row-wise softmax; the interpreter's semantic (not the
compiler's) now skips it exactly when device_assert would ignore its result.

Installed by the Triton backend's worker before the module snapshot, like fastdot."""
from __future__ import annotations

import inspect
import types


class _Nothing:
    """The scope of a skipped repeat: nothing was patched, nothing to undo."""

    def restore(self) -> None:
        pass


def install() -> bool:
    """Both skips, once; False where this Triton has not the functions they wrap."""
    return _patch_lang_once() and _no_dead_overflow_checks()


def _no_dead_overflow_checks() -> bool:
    from triton.runtime import interpreter

    semantic = getattr(interpreter, "interpreter_semantic", None)
    original = getattr(type(semantic), "binary_op_sanitize_overflow_impl", None)
    if original is None or getattr(semantic.binary_op_sanitize_overflow_impl, "opforge_live_only", False):
        return original is not None

    def binary_op_sanitize_overflow_impl(self, lhs, rhs, binary_op):
        if not self.builder.options.debug:  # device_assert's own first test: it would return
            return None
        return original(self, lhs, rhs, binary_op)

    binary_op_sanitize_overflow_impl.opforge_live_only = True
    semantic.binary_op_sanitize_overflow_impl = types.MethodType(binary_op_sanitize_overflow_impl, semantic)
    return True


def _patch_lang_once() -> bool:
    import triton.language as tl
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang", None)
    if original is None or getattr(original, "opforge_once", False):
        return original is not None
    languages = (tl, tl.core)

    def patched(module) -> bool:
        load = getattr(module, "load", None)
        return callable(load) and not tl.core.is_builtin(load)

    known: dict = {}  # (function, size of its globals) -> the language modules it sees

    def _patch_lang(fn):
        key = (fn, len(fn.__globals__))
        if (seen := known.get(key)) is None:
            seen = known[key] = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in languages]
        if seen and all(patched(module) for module in seen):
            return _Nothing()
        return original(fn)

    _patch_lang.opforge_once = True
    interpreter._patch_lang = _patch_lang
    return True
