"""The reward's commands, registered by opforge/cli.py:

    opforge reward SPEC ANSWER [--backend B] [--seed N] [--raw] [--json]   score one answer file
    opforge export-dataset [--out F] [--op OP]                             LLM trajectories with rewards, JSONL
    opforge reward-dataset [SPEC_OR_DIR ...] [--suite] [--serving] [--backend B ...] [--knowledge K]
                           [--split S] --out F.jsonl|F.parquet             tasks as verl/HF rows (dataset.py)
    opforge reward-server [--host H] [--port P] [--workers N] [--queue Q] [--executor local|ray]
                          [--address A] [--trials T] [--timeout S]         rewards over HTTP (server.py)

Each command module here keeps its top-level imports to the standard library: the CLI builds every
parser on each call, and torch is paid only by the command that runs."""
from __future__ import annotations

import argparse
import json
import os
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
    rs = sub.add_parser("reward-server", help="serve RL rewards over HTTP: POST /score, GET /health (docs/reward.md)")
    rs.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    rs.add_argument("--port", type=int, default=8707, help="port (default 8707; 0 picks a free one)")
    rs.add_argument("--workers", type=int, help="scoring processes (default: local, the CPU count; ray, the cluster's slots)")
    rs.add_argument("--queue", type=int, default=256, help="requests that may wait; past it a batch gets 503 (default 256)")
    rs.add_argument("--executor", choices=("local", "ray"), default="local", help="local worker processes, or Ray tasks")
    rs.add_argument("--address", help="with --executor ray: the cluster to connect to (default: a new local instance)")
    rs.add_argument("--trials", type=int, default=None, help="seeded trials per check (default: the reward's, 2)")
    rs.add_argument("--timeout", type=float, default=None, help="the most one sandbox job may take, seconds (default 600)")
    rs.add_argument("--verbose", action="store_true", help="log every HTTP request to stderr")
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


def cmd_reward_server(args: argparse.Namespace) -> int:
    from opforge.harness.errors import OpforgeError

    for flag, value, low in (("--port", args.port, 0), ("--workers", args.workers, 1), ("--queue", args.queue, 1),
                             ("--trials", args.trials, 1), ("--timeout", args.timeout, 1)):
        if value is not None and (value < low or (flag == "--port" and value > 65535)):
            raise OpforgeError(f"{flag} {value:g} is out of range")
    if args.address and args.executor != "ray":
        raise OpforgeError("--address needs --executor ray")
    from opforge.reward.score import TIMEOUT_S, TRIALS
    from opforge.reward.server import REQUEST_SLACK_S, RewardServer, make_pool

    timeout = args.timeout or TIMEOUT_S
    options = {"trials": args.trials or TRIALS, "timeout_s": timeout}
    workers = args.workers or (None if args.executor == "ray" else os.cpu_count() or 1)
    try:
        server = RewardServer((args.host, args.port), None, quiet=not args.verbose)
    except OSError as exc:
        raise OpforgeError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    try:
        server.pool = make_pool(args.executor, workers, args.queue, options, 4 * timeout + REQUEST_SLACK_S, args.address)
        health = server.pool.health()
        print(f"opforge reward-server: {server.url} ({health['workers']} {health['executor']} workers, "
              f"queue {args.queue}); POST /score, GET /health", flush=True)
        server.serve_forever()
    finally:  # Ctrl-C or SIGTERM (cli.main raises them here): waiting requests get an error, workers stop
        if server.pool is not None:
            server.pool.close()
        server.server_close()
    return 0


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


COMMANDS = {"reward": cmd_reward, "reward-server": cmd_reward_server, "export-dataset": cmd_export_dataset,
            "reward-dataset": cmd_reward_dataset}
