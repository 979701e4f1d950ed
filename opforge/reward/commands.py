"""The reward's commands, registered by opforge/cli.py:

    opforge reward SPEC ANSWER [--backend B] [--seed N] [--raw] [--json]   score one answer file
    opforge export-dataset [--out F] [--op OP]                             LLM trajectories with rewards, JSONL
    opforge reward-dataset [SPEC_OR_DIR ...] [--suite] [--serving] [--backend B ...] [--knowledge K]
                           [--split S] --out F.jsonl|F.parquet             tasks as verl/HF rows (dataset.py)

Each command module here keeps its top-level imports to the standard library: the CLI builds every
parser on each call, and torch is paid only by the command that runs."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from opforge.harness import intake


def add_parsers(sub) -> None:
    r = sub.add_parser("reward", help="score one answer (a model's reply, or a kernel file with --raw) as an RL reward")
    r.add_argument("spec", metavar="SPEC", help=intake.SPEC_HELP)
    r.add_argument("answer", metavar="ANSWER", help="a file with the model's reply (the kernel is extracted from it)")
    r.add_argument("--backend", default=None, help="the backend the kernel is written for (default triton)")
    r.add_argument("--seed", type=int, help="input seed (default: a fresh one, printed in the reward)")
    r.add_argument("--raw", action="store_true", help="ANSWER is the kernel file itself, not a reply")
    r.add_argument("--json", action="store_true", help="print the reward JSON (with the verdict)")
    ds = sub.add_parser("export-dataset", help="write LLM trajectories as JSONL for fine-tuning")
    ds.add_argument("--out", default="opforge-trajectories.jsonl")
    ds.add_argument("--op")
    rd = sub.add_parser("reward-dataset", help="write tasks (specs as prompts with their ground truth) as an RL "
                        "dataset: verl's rows, JSONL or Parquet (docs/reward.md)")
    rd.add_argument("specs", nargs="*", metavar="SPEC_OR_DIR", help="KernelBench-format spec files or folders of them")
    rd.add_argument("--suite", action="store_true", help="the op suite (ops/*.py)")
    rd.add_argument("--serving", action="store_true", help="the serving suite (ops/serving/*.py)")
    rd.add_argument("--backend", action="append", help="a backend to write each task for (repeatable; default triton)")
    rd.add_argument("--knowledge", type=int, default=None, metavar="K",
                    help="retrieved notes and examples per prompt (default 4; 0 for none)")
    rd.add_argument("--split", default="train", help="extra_info.split of every row (default train)")
    rd.add_argument("--out", required=True, help="FILE.jsonl or FILE.parquet")


def cmd_reward(args: argparse.Namespace) -> int:
    from opforge.backends import DEFAULT, known
    from opforge.harness.errors import CandidateError, SpecError

    intake.python_source(args.spec, "spec", SpecError)  # bad input is refused before torch loads
    known(args.backend or DEFAULT)
    answer = Path(args.answer)
    if not answer.is_file():
        raise CandidateError(f"{answer}: answer file not found")
    try:
        text = answer.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CandidateError(f"{answer}: not UTF-8 text") from None
    from opforge.reward.score import Scorer, Task

    task = Task.from_path(args.spec, args.backend or DEFAULT)
    with Scorer() as scorer:
        reward = scorer.score(task, text, seed=args.seed, raw=args.raw)
    if args.json:
        print(json.dumps(reward, indent=2, default=str))
    else:
        tier = reward["tier"] or "unscored"
        why = "; ".join(reward["why"]) or "every check passed"
        print(f"{reward['op']}: {tier} ({reward['reward']}), seed {reward['seed']}: {why}")
    return 0 if reward["scored"] else 3


def cmd_export_dataset(args: argparse.Namespace) -> int:
    from opforge.registry import Registry, resolve_db_path
    from opforge.reward import dataset

    with Registry(resolve_db_path(args.db)) as reg:
        rows = dataset.trajectories(reg, args.op)
    with open(args.out, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, default=str) + "\n")
    print(f"wrote {len(rows)} LLM calls with their rewards to {args.out}", file=sys.stdout)
    return 0


def cmd_reward_dataset(args: argparse.Namespace) -> int:
    from opforge.backends import DEFAULT, known
    from opforge.harness.errors import OpforgeError

    if not (args.specs or args.suite or args.serving):
        raise OpforgeError("no tasks: name spec files or folders, or --suite / --serving")
    if args.knowledge is not None and args.knowledge < 0:
        raise OpforgeError(f"--knowledge {args.knowledge} is out of range (0 or more)")
    if Path(args.out).suffix not in (".jsonl", ".parquet"):
        raise OpforgeError(f"{args.out}: the dataset is written as .jsonl or .parquet")
    backends = list(dict.fromkeys(args.backend or [DEFAULT]))
    for backend in backends:
        known(backend)
    from opforge.reward import dataset

    skipped = []

    def skip(path: Path, why: str) -> None:
        skipped.append(path)
        print(f"skipped {path}: {why}", file=sys.stderr)

    tasks = dataset.collect(args.specs, args.suite, args.serving, backends, skipped=skip)
    if not tasks:
        raise OpforgeError(f"no usable spec among the inputs ({len(skipped)} skipped)")
    out = dataset.write(dataset.rows(tasks, args.knowledge, args.split), args.out)
    print(f"wrote {len(tasks)} tasks ({len(tasks) // len(backends)} specs x {len(backends)} backend(s)) to {out}"
          + (f"; {len(skipped)} file(s) skipped" if skipped else ""))
    return 0


COMMANDS = {"reward": cmd_reward, "export-dataset": cmd_export_dataset,
            "reward-dataset": cmd_reward_dataset}
