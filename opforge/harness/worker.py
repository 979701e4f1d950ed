"""The evaluation worker: `python -m harness.worker JOB.json` runs one job on candidate code.

This is the only process that imports a candidate, and it holds neither the reference nor the
comparison (see harness/checker.py and harness/judge.py). It is started by a sandbox runtime
(sandbox/) with a time limit, a scrubbed environment and a scratch directory; it writes what the
candidate did as JSON to the path named in the job, and the outputs to `outputs.pt`. Only the
standard library and the backend table are imported before the job's backend plugin sets up the
process (Triton's TRITON_INTERPRET has to be set before Triton is imported).

Job fields: mode ("build" | "run" | "verify"), backend (a backends name), candidate_path, inputs_path, outputs_path, result_path,
device ("cpu" | "cuda"), arch, float32. The sandbox knows none of this: the caller names the module
(MODULE) and what it imports from (mounts()) in each sandbox.Job.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from functools import lru_cache
from pathlib import Path

MODULE = "opforge.harness.worker"  # what a sandbox runs: python -I -B -m opforge.harness.worker JOB.json


@lru_cache(maxsize=1)
def mounts() -> tuple[str, ...]:
    """The host paths the worker imports from, for a sandbox to bind read-only: the opforge package
    and the site directories of torch, numpy and the backends' libraries (inside the running environment as a rule, but an
    environment may borrow another's site-packages through a .pth line)."""
    import importlib.util

    from opforge.backends import candidate_libraries

    sites = []
    for name in ("torch", *candidate_libraries(), "numpy"):  # what the worker and its candidates import
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            sites.append(str(Path(list(spec.submodule_search_locations)[0]).resolve().parent))
    return (str(Path(__file__).resolve().parent.parent), *dict.fromkeys(sites))  # the opforge package: its __init__ too


def run_job(job: dict) -> dict:
    """mode "build": AOT-compile the launches; "run": the trials; "verify": both in one process,
    only where no interpreter is involved (Triton reads TRITON_INTERPRET when it is first imported,
    for its own library functions too, so a CPU run needs a process of its own)."""
    from opforge.backends import DEFAULT, plugin

    plugin(job.get("backend", DEFAULT)).prepare_worker(job["mode"], job.get("device", "cpu"), job)
    from opforge.harness import checker, guards

    guards.install_tripwires()
    result: dict = {"build": None, "run": None}
    if job["mode"] == "build":
        result["build"] = checker.build_job(job)
        return result
    snapshot = guards.ModuleSnapshot()  # before any candidate code runs, so import-time patches show
    if job["mode"] == "verify":
        result["build"] = checker.build_job(job)
        if result["build"]["reasons"]:
            return result
    result["run"] = checker.run_plan(job, snapshot)
    return result


def _usage() -> dict:
    """The job's own CPU time and peak memory: runtimes that cannot wait4 the worker read these."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_s": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
            "max_rss_mb": max(own.ru_maxrss, kids.ru_maxrss) / 1024}


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        job = json.load(fh)
    owner = os.getpid()
    try:
        result = run_job(job)
    except BaseException as exc:  # a worker must always leave a result for the parent to read
        result = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    if os.getpid() != owner:
        # A process the candidate forked got here (its fork bomb or pool returned): only the worker
        # itself writes the verdict, or racing children would overwrite or break it.
        os._exit(1)
    result["usage"] = _usage()
    with open(job["result_path"] + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(result, fh, default=str)
    os.replace(job["result_path"] + ".tmp", job["result_path"])
    sys.stdout.flush()
    # Skip interpreter teardown: candidate objects' finalizers have no business running after the verdict.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
