"""A dataset of tasks for RL training, and the recorded LLM trajectories with their rewards.

Tasks are op specs (KernelBench's format): the op suite (ops/*.py), the serving suite
(ops/serving/*.py) and any KernelBench-format files or folders, each for one or more backends. A row
is in verl's RL format, which Hugging Face `datasets` loads from JSONL or Parquet:

    data_source   "opforge/suite", "opforge/serving", or "opforge/<folder>" for files given by path
    prompt        the chat messages the agent loop's drafter sends (prompt.messages: the backend's
                  contract, the spec, retrieved knowledge less the task's own answer)
    ability       "kernel/<backend>"
    reward_model  {"style": "rule", "ground_truth": JSON of the task: spec source, op, backend}
    extra_info    {"split", "index", "task_id", "op", "backend", "spec_sha256", "path", "reward_version"}

The ground truth carries the spec's whole source, so a reward worker (verl.py, the reward server)
scores without a checkout of the tasks. A file that is not a spec (no `class Model` or no
`get_inputs`, not Python, not UTF-8) is skipped with one line saying why; a dataset with no task
at all is an error."""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from opforge.backends import DEFAULT
from opforge.harness.errors import OpforgeError, SpecError
from opforge.reward.score import Task
from opforge.reward.tiers import REWARD_VERSION, classify

ROOT = Path(__file__).resolve().parent.parent  # the opforge package (ops is a link to the checkout's ops/)
SUITE, SERVING = ROOT / "ops", ROOT / "ops" / "serving"
TASK_FORMAT = "opforge-task/1"  # the ground truth's format; a change to its keys is a new version
ABILITY = "kernel/{backend}"
FORMATS = (".jsonl", ".parquet")


def ground_truth(task: Task) -> str:
    """The task as reward_model.ground_truth: JSON a reward worker scores from, with no file."""
    return json.dumps({"format": TASK_FORMAT, **task.wire()}, sort_keys=True)


def task_of(truth: str | dict) -> Task:
    """The Task a ground truth holds (JSON text, or the dict it decodes to); SpecError if it is none."""
    try:
        data = json.loads(truth) if isinstance(truth, (str, bytes)) else truth
    except ValueError:
        raise SpecError(f"ground_truth is not JSON: {str(truth)[:60]!r}") from None
    if not isinstance(data, dict) or data.get("format") != TASK_FORMAT:
        raise SpecError(f"ground_truth is not an opforge task ({TASK_FORMAT}): {str(truth)[:60]!r}")
    missing = [key for key in ("spec", "op", "backend") if not isinstance(data.get(key), str) or not data[key]]
    if missing:
        raise SpecError(f"ground_truth lacks {', '.join(missing)}")
    return Task.from_wire(data)


def op_name(path: Path) -> str:
    """The op a spec file is scored under: its stem, made a Python identifier
    (`1_Square_matrix_multiplication_` -> `op_1_Square_matrix_multiplication_`)."""
    name = re.sub(r"\W", "_", path.stem)
    return name if name.isidentifier() else f"op_{name}"


def not_a_spec(path: Path) -> str | None:
    """Why a file is no KernelBench-format spec (read, never run), or None when it is one."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except SyntaxError as exc:
        return f"not Python (line {exc.lineno}: {exc.msg})"
    names = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    lacking = [name for name in ("Model", "get_inputs") if name not in names]
    return f"no {' or '.join(lacking)} at module level" if lacking else None


def spec_files(paths: Iterable[str | Path]) -> list[tuple[Path, str]]:
    """(file, data_source) for each path: a file, or a folder's *.py (not `_*.py`), sorted."""
    found = []
    for given in map(Path, paths):
        if given.is_dir():
            found += [(p, f"opforge/{given.resolve().name}") for p in sorted(given.glob("*.py")) if not p.name.startswith("_")]
        elif given.is_file():
            found.append((given, f"opforge/{given.resolve().parent.name}"))
        else:
            raise SpecError(f"{given}: no such file or folder")
    return found


def collect(paths: Iterable[str | Path] = (), suite: bool = False, serving: bool = False,
            backends: Iterable[str] = (DEFAULT,), skipped: Callable[[Path, str], None] | None = None) -> list[Task]:
    """The tasks: each usable spec once per backend (suite, serving suite, then `paths` in order)."""
    files = [(p, "opforge/suite") for p in sorted(SUITE.glob("*.py")) if suite and not p.name.startswith("_")]
    files += [(p, "opforge/serving") for p in sorted(SERVING.glob("*.py")) if serving and not p.name.startswith("_")]
    files += spec_files(paths)
    tasks, seen = [], set()
    for path, source in files:
        why = not_a_spec(path)
        if why is None and path.resolve() in seen:
            why = "given twice"
        if why is not None:
            if skipped:
                skipped(path, why)
            continue
        seen.add(path.resolve())
        text, op = path.read_text(encoding="utf-8"), op_name(path)
        tasks += [Task(text, op, backend, source, f"{source}/{op}", meta={"path": _shown(path)})
                  for backend in dict.fromkeys(backends)]
    return tasks


def rows(tasks: list[Task], knowledge_k: int | None = None, split: str = "train") -> list[dict]:
    """verl's RL rows for the tasks, in order (index counts from 0)."""
    from opforge.reward.prompt import KNOWLEDGE_K, knowledge, messages

    k = KNOWLEDGE_K if knowledge_k is None else knowledge_k
    out = []
    for index, task in enumerate(tasks):
        out.append({
            "data_source": task.data_source,
            "prompt": messages(task, knowledge_items=knowledge(task, k)),
            "ability": ABILITY.format(backend=task.backend),
            "reward_model": {"style": "rule", "ground_truth": ground_truth(task)},
            "extra_info": {"split": split, "index": index, "task_id": task.key,
                           "op": task.op, "backend": task.backend, "spec_sha256": task.spec_sha256,
                           "path": task.meta.get("path", ""), "reward_version": REWARD_VERSION},
        })
    return out


def write(records: list[dict], out: str | Path) -> Path:
    """JSON lines or Parquet (pyarrow), by the file's suffix."""
    out = Path(out)
    if out.suffix not in FORMATS:
        raise OpforgeError(f"{out}: the dataset is written as {' or '.join(FORMATS)}, not {out.suffix or 'no suffix'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".jsonl":
        with open(out, "w", encoding="utf-8") as fh:
            for record in records:
                fh.write(json.dumps(record, default=str) + "\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), out)
    return out


def verdict_reward(verdict: dict | None, backend: str | None) -> dict:
    """The reward of a recorded verdict ({version, tier, reward, why, fraction, speed}); tier and
    reward None for a call whose reply was never verified."""
    if not verdict:
        return {"version": REWARD_VERSION, "tier": None, "reward": None, "why": ["never verified"],
                "fraction": None, "speed": None}
    from opforge.reward.score import cheat_rules

    return {"version": REWARD_VERSION, **classify(verdict, cheat_rules(backend or verdict.get("backend") or ""))}


def trajectories(registry, op: str | None = None) -> list[dict]:
    """Every recorded LLM call (registry.trajectories) with the reward of its candidate's latest verdict."""
    out = []
    for row in registry.trajectories(op, with_verdict=True):
        verdict, backend = row.pop("verdict"), row.pop("backend")
        out.append(row | {"reward": verdict_reward(verdict, backend)})
    return out


def _shown(path: Path) -> str:
    """The path as a dataset row shows it: the suite's inside the package (ops/...), others as given."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
