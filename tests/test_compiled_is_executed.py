"""What was compiled is what ran, and the interpreter is no way out (#32 items 2, 3 and 10).

Each hostile kernel here verified before these mechanisms existed (a CPU run under Triton's
interpreter); each is now rejected by the mechanism meant for it, and a correct control beside it
still verifies:

- the build records every case of the plan and compiles every distinct launch signature;
  the run refuses (`unbuilt-launch`) any interpreted launch whose key the build did not compile
  (backends/triton/launch_keys.py, shared with Triton-Ascend);
- the interpreter's own globals (`np`, `inspect`...) never reach the candidate's module
  (backends/triton/hidden_names.py), and a name the file never binds is refused statically
  (`unbound-name`, backends/triton/static_names.py);
- pre-run hooks registered on a kernel run as the candidate's code under the guards.
Where a kernel also fails a static rule, the runtime mechanism is tested with static checks
skipped, and the static rule on its own.
"""
from __future__ import annotations

import ast
import types

import pytest

from conftest import DATA, KERNELS, ROOT, TINY, require_ascend
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, verify


def codes(v: dict) -> set[str]:
    return {r.split(":", 1)[0] for r in v["reasons"]}


def static_codes(source: str) -> list[str]:
    return [r.split(":", 1)[0] for r in check_source(source, float32_spec=True).reasons]


# kernel, reason code, text the reason must contain, static rule that also refuses it (None: none)
HOSTILE = [
    ("hostile_interp_np_dlpack", "runtime-error", "name 'np' is not defined", "unbound-name"),
    ("hostile_interp_getattr_static", "runtime-error", "name 'inspect' is not defined", "unbound-name"),
    ("hostile_pre_run_hook", "torch-compute", "softmax", None),
    ("hostile_interp_branch", "runtime-error", "unbuilt-launch: _softmax_kernel was launched as", "interpreter-detection"),
    ("hostile_variant_uncompilable", "build-error", "_narrow_kernel does not compile for sm_90", None),
    ("hostile_refusal_caught", "runtime-error", "unbuilt-launch: _softmax_kernel was launched as", "interpreter-detection"),
]


@pytest.mark.parametrize("kernel, code, text, static", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_kernel_is_rejected_by_its_runtime_mechanism(kernel, code, text, static):
    v = verify(TINY, KERNELS / f"{kernel}.py", VerifyOptions(seed=4321, device="cpu", skip_static=True))
    assert not v["correct"]
    assert any(r.startswith(code) and text in r for r in v["reasons"]), v["reasons"]


@pytest.mark.parametrize("kernel, static", [(h[0], h[3]) for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_kernel_meets_its_static_rule_or_none(kernel, static):
    found = static_codes((KERNELS / f"{kernel}.py").read_text())
    assert found == ([static] if static else []), found


@pytest.mark.parametrize("kernel", ["tlmath_softmax", "narrow_rows_ok", "data_constexpr_ok", "jit_constexpr_ok"])
def test_correct_controls_verify(kernel):
    """tl.math kernels keep one launch identity (#32 item 10); a variant-only kernel, a constexpr
    that differs between layouts and one read from the inputs' values are compiled by the build
    like the main case's; a jit function passed as a constexpr has one key in the build and the run."""
    v = verify(TINY, KERNELS / f"{kernel}.py", VerifyOptions(seed=4321, device="cpu"))
    assert v["correct"] and v["level"] == "emulated", v["reasons"]


# -- Triton-Ascend: the same interpreter rewriter and launch identity -------------------------------

SILU = ROOT / "ops" / "silu.py"


def ascend(kernel: str, **kw) -> dict:
    require_ascend()
    options = VerifyOptions(seed=5, trials=2, device="cpu", backend="triton_ascend", sandbox="none", **kw)
    return verify(SILU, DATA / "hostile_ascend" / f"{kernel}.py", options)


def test_ascend_tl_math_kernel_verifies():
    v = ascend("silu_tlmath")
    assert v["correct"] and v["level"] == "emulated", v["reasons"]


def test_ascend_interpreter_globals_are_not_the_candidates():
    v = ascend("np_dlpack", skip_static=True)
    assert not v["correct"]
    assert any(r.startswith("runtime-error") and "name 'np' is not defined" in r for r in v["reasons"]), v["reasons"]


# -- the launch identity -----------------------------------------------------------------------------

KERNEL_SOURCE = """
def kernel(x_ptr, BLOCK):
    y = tl.math.exp(x_ptr) + SCALE
    return [tl.math.log(v) for v in (y, OFFSET)]
"""


def _function(namespace: dict) -> types.FunctionType:
    exec(compile(KERNEL_SOURCE, "<kernel>", "exec"), namespace)
    return namespace["kernel"]


def test_launch_identity_reads_only_the_globals_the_kernel_loads():
    """`math` in `tl.math.exp` is an attribute: a module global of that name appearing later (the
    interpreter used to copy its own there) changes nothing; a global the kernel loads does, also
    from inside a comprehension."""
    from opforge.backends.triton.launch_keys import identity

    namespace = {"tl": types.SimpleNamespace(), "SCALE": 2, "OFFSET": 1}
    fn = _function(namespace)
    before = identity(fn)
    namespace.update(math=ast, np=types, exp=1, log=2)
    assert identity(fn) == before
    namespace["SCALE"] = 3
    assert identity(fn) != before
    namespace["SCALE"], namespace["OFFSET"] = 2, 5
    assert identity(fn) != before


# -- static: names never bound, ctypes ---------------------------------------------------------------

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"
TAIL = """

@triton.jit
def _k(x_ptr):
    tl.program_id(0)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        _k[(1,)](x)
        return x
"""

BOUND = '''
import math
try:
    import functools
except ImportError:
    functools = None
SCALE = 2


class Holder:
    size = 4
    twice = size * 2
    items = [n for n in range(size)]  # the first iterable is read in the class body

    def get(self, n: Tensor) -> int:
        total = 0
        for i in range(n):
            total += i
        with torch.no_grad() as ctx:
            del ctx
        try:
            pass
        except ValueError as err:
            print(err)
        if (k := n + 1) > 0:
            total += k
        squares = {j: j * j for j in range(3)}
        return total + len(squares) + (lambda a, *b, c=1, **d: a + c)(1) + math.floor(SCALE)


if __name__ == "__main__":
    print(Holder().get(3), [w for w in Holder.items if w])
'''


def test_names_bound_in_every_way_python_binds_them_are_not_refused():
    assert static_codes("from __future__ import annotations\n" + HEADER + BOUND + TAIL) == []


@pytest.mark.parametrize("body, name", [
    ("def f():\n    return np.ones(1)\n", "np"),
    ("class A:\n    size = 4\n\n    def get(self):\n        return size\n", "size"),  # a class body is no enclosing scope
    ("def f():\n    return [j for j in range(3)] + [j]\n", "j"),  # a comprehension's target stays inside it
    ("def f(x):\n    inspect.getattr_static(x, 'y')\n", "inspect"),
], ids=["np", "class-attribute", "comprehension-target", "inspect"])
def test_a_name_never_bound_in_the_file_is_refused(body, name):
    reasons = check_source(HEADER + body + TAIL, float32_spec=True).reasons
    assert any(r.startswith(f"unbound-name: {name} is never bound") for r in reasons), reasons


@pytest.mark.parametrize("line", ["import ctypes", "from ctypes import CDLL", "import ctypes.util"],
                         ids=["import", "from-import", "submodule"])
def test_ctypes_is_refused(line):
    reasons = check_source(HEADER + line + "\n" + TAIL, float32_spec=True).reasons
    assert any(r.startswith("forbidden-import: ctypes") for r in reasons), reasons


@pytest.mark.parametrize("expr", ['hasattr(_k, "rewriter")', "_k.cache_key", '"TRITON_INTERPRET=1" in str(x)'],
                         ids=["hasattr-rewriter", "cache-key", "env-var"])
def test_reading_what_tells_the_interpreter_from_the_compiler_is_refused(expr):
    source = HEADER + TAIL + f"\n\ndef probe(x):\n    return {expr}\n"
    assert "interpreter-detection" in static_codes(source), check_source(source, float32_spec=True).reasons
