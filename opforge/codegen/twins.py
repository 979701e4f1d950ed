"""A traceable twin for a reference torch.export cannot trace.

Engine developers write decode attention as a loop over the batch that reads each sequence's length
into Python (`L = int(seq_lens[b].item())`, `range(L)`, `keys[:L]`): the sizes depend on the data,
so torch.export stops (GuardOnDataDependentSymNode) and no graph exists for a family to read. The
same op written over the whole batch with a mask (ops/serving/paged_decode_attention.py) traces. So
where export stops on a data-dependent size, the expert runs the reference beside every Model of the
serving references the package ships (opforge/ops/serving/, then codegen/twin_refs/: engine layouts
the suite lacks) taking the same number of forward
arguments and the same constructor arguments, on every input list of the spec (main and variants,
at the sizes used), and drafts from the first one whose outputs, and in-place arguments, match within
the harness's tolerance for their dtype. The harness still verifies the candidate against the
spec's own reference (every variant, every stress case): a twin that agreed only on those inputs
yields a failing candidate, never a false pass.
"""
from __future__ import annotations

import ast
import inspect
import tempfile
from pathlib import Path

import torch

from opforge.harness.compare import compare_outputs, flatten_outputs
from opforge.harness.mode import mode_of, set_mode
from opforge.harness.spec import input_lists, load_module

# the serving suite the package ships, then the expert's own references of engine layouts it lacks
KNOWN = (Path(__file__).resolve().parent.parent / "ops" / "serving", Path(__file__).resolve().parent / "twin_refs")
# torch.export's words for a size or a branch that depends on tensor data
DATA_DEPENDENT = ("data-dependent", "DataDependent", "GuardOnDataDependentSymNode", "unbacked")


def data_dependent(reason: str) -> bool:
    return any(word in reason for word in DATA_DEPENDENT)


def model_source(source: str) -> str | None:
    """The text of a spec's `class Model` (None when it has none at the top level)."""
    tree = ast.parse(source)
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    return ast.get_source_segment(source, node) if node is not None else None


def find(spec_source: str, sizes: dict[str, int], known: tuple[Path, ...] = KNOWN) -> tuple[str, Path] | None:
    """(the spec's source with its Model replaced by a traceable twin's, the twin's file), or None."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.py"
        path.write_text(spec_source)
        user = load_module(path, sizes)
        torch.manual_seed(0)
        lists = input_lists(user, path)
        wanted = _arity(user.Model)
        mutates = (getattr(user, "OPFORGE", {}) or {}).get("mutates", [])
        for candidate in [p for folder in known for p in sorted(folder.glob("*.py")) if p.name != "__init__.py"]:
            twin = model_source(candidate.read_text())
            if twin is None:
                continue
            hybrid = f"{spec_source}\n\n# traced through {candidate.name}'s Model (same outputs on every input list)\n{twin}\n"
            try:
                module = load_module(path, sizes, source=hybrid)
            except Exception:  # the twin needs names of its own module
                continue
            if _arity(module.Model) != wanted or (mutates and _params(module.Model) != _params(user.Model)):
                continue
            if _agrees(user, module, lists):
                return hybrid, candidate
    return None


def _params(model: type) -> list[str]:
    return list(inspect.signature(model.forward).parameters)[1:]


def _arity(model: type) -> tuple[int, int]:
    init = [p for p in inspect.signature(model.__init__).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return len(_params(model)), len(init) - 1


def _agrees(user, twin, lists: list[list]) -> bool:
    init = user.get_init_inputs() if hasattr(user, "get_init_inputs") else []
    try:
        torch.manual_seed(0)
        mode = mode_of(getattr(user, "OPFORGE", None))
        ref, other = set_mode(user.Model(*init), mode), set_mode(twin.Model(*init), mode)
        other.load_state_dict(ref.state_dict())
        for inputs in lists:
            a = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            b = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            with torch.no_grad():
                want, got = flatten_outputs(ref(*a)), flatten_outputs(other(*b))
            reports = compare_outputs(want + [x for x in a if isinstance(x, torch.Tensor)],
                                      got + [x for x in b if isinstance(x, torch.Tensor)], None, None)
            if any(r.problem for r in reports):
                return False
    except Exception:  # the twin does not take these arguments
        return False
    return True
