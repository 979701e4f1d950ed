"""`verify(spec, kernel)`: load the spec, read the candidate, static checks, then the build and run
jobs in the sandbox, merged into one verdict dict (the contract `opforge verify --json` prints).

This process never imports the candidate: it parses its source, runs the reference and judges
(harness/judge.py, harness/evidence.py); the candidate runs in a sandboxed process of its own
(harness/checker.py) that gets inputs and gives back outputs as copies.
"""
from __future__ import annotations

import hashlib
import os
import platform
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path

from opforge.harness import cost, early, evidence, judge, ladder, worker
from opforge.backends import BACKENDS, DEFAULT, get_backend
from opforge.harness.plugin import BackendPlugin, dist_version
from opforge.harness.ladder import hardware_slug, step
from opforge.harness.errors import BackendUnavailable, CandidateError, OpforgeError
from opforge.harness.hardware import Hardware, detect
from opforge.harness.spec import OpSpec, load_spec
from opforge.sandbox import Job, JobResult, Sandbox, get_sandbox
from opforge.sandbox.select import RUNTIMES

CPU_MAX_ELEMENTS = int(os.environ.get("OPFORGE_CPU_MAX_ELEMENTS", 1 << 19))
CPU_MAX_BYTES = 2 << 30
GPU_MAX_BYTES = 32 << 30


# A CPU verification as one job, its build and run forked from one worker (worker.run_phases); False:
# the two jobs of old, one process each (benchmarks/cpu_phases.py measures one against the other).
PHASED = True
DEVICES = ("auto", "cpu")  # "auto" (stored as None): the GPU when there is one; "cpu": Triton's interpreter


@dataclass(frozen=True)
class VerifyOptions:
    """How a candidate is verified. Every value is checked here, so the CLI, batch workers, the
    workbench and library callers all get the same one-line error (an OpforgeError) for a bad one."""

    backend: str = DEFAULT  # a name of backends.BACKENDS (whether usable here: prepare())
    device: str | None = None  # None or "auto": the GPU when there is one; "cpu" forces the interpreter
    trials: int = 5  # seeded trials per input variant
    seed: int | None = None  # None: a fresh secret seed, so a candidate cannot predict its inputs
    timeout_s: float = 600.0  # per sandbox job
    sandbox: str | None = None  # auto | docker | jail | none; None: $OPFORGE_SANDBOX, else auto
    arch: int | None = None  # AOT target (90 = sm_90); None: the GPU's own, else sm_90
    profile: bool = True
    skip_static: bool = False  # let statically rejected code run anyway: only to test the sandbox on hostile code
    replayable: bool = False  # wait for the judge at every fail-fast checkpoint (harness/early.py): the RL reward

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise BackendUnavailable(f"unknown backend {self.backend!r} (known: {', '.join(BACKENDS)})")
        if self.device not in (None, *DEVICES):
            raise OpforgeError(f"unknown device {self.device!r} (known: {', '.join(DEVICES)})")
        if self.sandbox not in (None, "auto", *RUNTIMES):
            raise OpforgeError(f"unknown sandbox runtime {self.sandbox!r} (known: auto, {', '.join(RUNTIMES)})")
        if not _integer(self.trials) or self.trials < 1:
            raise OpforgeError(f"trials must be an integer of at least 1, got {self.trials!r}")
        if not _number(self.timeout_s) or not self.timeout_s > 0:
            raise OpforgeError(f"timeout must be a positive number of seconds, got {self.timeout_s!r}")
        if self.arch is not None and (not _integer(self.arch) or self.arch < 1):
            raise OpforgeError(f"arch must be a positive integer such as 90 (sm_90), got {self.arch!r}")
        if self.seed is not None and not _integer(self.seed):
            raise OpforgeError(f"seed must be an integer, got {self.seed!r}")
        object.__setattr__(self, "device", None if self.device == "auto" else self.device)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def prepare(spec_path: str | Path, options: VerifyOptions, budget_s: float | None = None) -> tuple[OpSpec, Hardware]:
    """Validate the spec for the hardware (SpecError / BackendUnavailable); a CPU run sized to budget_s."""
    backend = get_backend(options.backend)
    hardware = detect(force_cpu=options.device == "cpu", accelerator=backend.plugin().accelerator)
    if hardware.device == "cpu":  # what the numerics run on: Triton's interpreter, the CUDA emulator...
        hardware = replace(hardware, fingerprint=f"cpu/{platform.machine()}/{backend.plugin().cpu_runner().name}")
    max_elements = CPU_MAX_ELEMENTS if hardware.device == "cpu" else None
    max_bytes = CPU_MAX_BYTES if hardware.device == "cpu" else GPU_MAX_BYTES
    budget = (budget_s or cost.BUDGET_S) if hardware.device == "cpu" else None  # sized by its estimated seconds too
    return load_spec(spec_path, max_elements=max_elements, max_bytes=max_bytes, backend=options.backend,
                     budget_s=budget), hardware


def read_candidate(path: str | Path) -> str:
    path = Path(path)
    if not path.is_file():
        raise CandidateError(f"{path}: kernel file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CandidateError(f"{path}: not UTF-8 text") from None


def verify(spec_path: str | Path, kernel_path: str | Path, options: VerifyOptions | None = None) -> dict:
    options = options or VerifyOptions()
    spec, hardware = prepare(spec_path, options)
    return verify_source(spec, hardware, read_candidate(kernel_path), options)


def verify_source(spec: OpSpec, hardware: Hardware, source: str, options: VerifyOptions,
                  sandbox: Sandbox | None = None) -> dict:
    """The whole pipeline for one candidate source; returns the verdict dict, never raises for bad code.
    Pass a `sandbox` to keep one warm across many candidates (the caller closes it)."""
    if sandbox is not None:
        return _verify_in(spec, hardware, source, options, sandbox)
    sandbox = get_sandbox(options.sandbox)
    try:
        return _verify_in(spec, hardware, source, options, sandbox)
    finally:
        sandbox.close()


def _verify_in(spec: OpSpec, hardware: Hardware, source: str, options: VerifyOptions, sandbox: Sandbox) -> dict:
    started = time.perf_counter()
    seed = options.seed if options.seed is not None else secrets.randbelow(2**31 - 10_000)
    verdict = _base_verdict(spec, hardware, source, options, seed, sandbox.name)
    backend = get_backend(options.backend).plugin()
    static = backend.static(source, float32_spec=spec.is_float32)
    steps = verdict["steps"]
    steps["static"] = step("passed", "opforge-static", dist_version("opforge"), time.perf_counter() - started)
    if static.warnings:
        verdict.setdefault("warnings", []).extend(static.warnings)
    if options.skip_static:
        verdict.setdefault("warnings", []).append(f"static checks skipped ({len(static.reasons)} findings)")
        static.skip = {}
    elif static.reasons:
        steps["static"] = step("failed", "opforge-static", dist_version("opforge"), steps["static"]["seconds"],
                               static.reasons[0], "syntax" if static.reasons[0].startswith("syntax-error") else "rules")
        return _finish(verdict, static.reasons, started)
    try:
        material = judge.prepare(spec, seed, options.trials, hardware.device)
    except judge.ReferenceError_ as exc:  # the numerics step cannot compare against a reference that fails
        steps[_numerics(hardware)] = step("failed", reason=str(exc), check="load")
        return _finish(verdict, [str(exc)], started)
    payload = {"device": hardware.device, "arch": options.arch or hardware.arch, "float32": spec.is_float32,
               "backend": options.backend, "phase_timeout_s": options.timeout_s, "replayable": options.replayable,
               "own_tmp": sandbox.name != "none", **static.job}
    modes = _modes(hardware, static.skip)
    files = {"candidate.py": _write_temp(source.encode(), ".py"), "inputs.pt": _write_temp(material.payload(), ".pt")}
    results: dict = {"build": None, "run": None}
    after = early.checkpoints(material)  # fail fast: the judge reads the outputs on their way
    watch = early.Watch(material, spec.meta.get("atol"), spec.meta.get("rtol"), early.output_cap(material, after))
    try:
        for job_mode in modes:
            phased = job_mode == "verify" and hardware.device == "cpu"
            runs = job_mode != "build"
            outputs = {"outputs.pt": material.output_cap(), **({early.CHECKPOINT: watch.cap} if after else {})}
            whole = sandbox.run(Job({**payload, "mode": job_mode, **({"checkpoints": after} if runs else {})}, files,
                                    worker.job_timeout(options.timeout_s, phased), outputs=outputs if runs else {},
                                    worker=worker.MODULE, mounts=(*worker.mounts(), *backend.mounts()),
                                    preload=backend.warm_imports, watch=watch if runs and after else None))
            for mode, result in worker.phase_results(whole) if phased else [(job_mode, whole)]:
                if problem := _take_job(verdict, results, mode, result, hardware, backend, static.skip):
                    return _finish(verdict, [problem], started)
            if results["build"] and results["build"].get("reasons"):
                break
    finally:
        for path in files.values():
            os.unlink(path)
    ran = len((results["run"] or {}).get("calls") or [])
    if spec.cost and ran:  # the estimate beside what the calls took (the worker's clock: a record, not evidence)
        verdict["sizes"]["measured_s"] = cost.measured(results["run"]["calls"])
    if watch.stopped is not None and ran < len(material.plan):  # this judge said stop: the rest was not run
        verdict["not_run"], material = early.not_run(material, ran), early.prefix(material, ran)
    return _judge_jobs(verdict, spec, material, results, hardware, options, backend, static.skip, started)


def _modes(hardware: Hardware, skip: dict) -> list[str]:
    """The sandbox jobs to run: one that builds and runs ("verify": on the CPU, the worker forks a
    process for each, since the interpreted run needs its own), or only the one this backend can run
    here for this candidate."""
    numerics = _numerics(hardware)
    wanted = [mode for mode, name in (("build", "compile"), ("run", numerics)) if name not in skip]
    if hardware.device == "cpu" and not PHASED:
        return wanted
    return ["verify"] if len(wanted) == 2 or hardware.device != "cpu" and wanted else wanted


def _take_job(verdict: dict, results: dict, mode: str, result: JobResult, hardware: Hardware, backend,
              skip: dict) -> str | None:
    """One job's (or phase's) usage, report and outputs into the verdict; its failure as one line,
    recorded on the step it stops."""
    steps = verdict["steps"]
    if problem := _record_job(verdict, mode, result):
        # the build job runs forward once to record launches: a hang there is the forward's
        built = mode == "build" and result.cause != "timeout"
        steps["compile" if built else _numerics(hardware)] = step(
            "failed", reason=problem, check="build" if built else "run")
        return problem
    results.update({k: v for k, v in result.payload.items() if k in results and isinstance(v, dict)})
    results["outputs"] = _outputs(result) if mode != "build" else None
    if results["build"] and "compile" not in skip:  # kept if a later job dies
        steps.update(_build_steps(backend, results["build"]))
    return None


def _judge_jobs(verdict: dict, spec: OpSpec, material: judge.Material, results: dict, hardware: Hardware,
                options: VerifyOptions, backend, skip: dict, started: float) -> dict:
    steps = verdict["steps"]
    build = results["build"]
    if "compile" in skip:
        steps["compile"] = skip["compile"]
    else:
        build = build or {"kernels": [], "reasons": ["runtime-error: the build job returned no report"]}
        target = next((k["target"] for k in build.get("kernels", []) if k.get("target")),
                      f"sm_{options.arch or hardware.arch}")  # an Ascend part for Triton-Ascend
        verdict["build"] = {"target": target, "kernels": build.get("kernels", []),
                            "note": build.get("note")}
        steps.update(_build_steps(backend, build))
        for warning in build.get("warnings") or []:
            if warning not in verdict.setdefault("warnings", []):
                verdict["warnings"].append(warning)
        if build.get("reasons"):  # the failed step (compile, or static for a launch rule the grid broke) says
            return _finish(verdict, [str(r) for r in build["reasons"]], started)
    numerics = _numerics(hardware)
    if numerics in skip:
        steps[numerics] = skip[numerics]
        return _finish(verdict, [f"unverifiable: {skip[numerics]['reason']}"], started)
    run = _judge_run(spec, material, results["run"] or {}, results.get("outputs"), hardware, options, started)
    verdict.update({k: run[k] for k in ("variants", "stress", "launches", "anticheat", "timings", "calls")})
    tool = backend.cpu_runner() if numerics == "cpu_run" else None
    seconds = (verdict.get("jobs", {}).get("run") or verdict.get("jobs", {}).get("verify") or {}).get("wall_s")
    if run["reasons"] and all(str(r).startswith("unsupported:") for r in run["reasons"]):
        # every finding is a construct the CPU runner does not model (AscendC's cube unit): not verifiable here
        steps[numerics] = step("unsupported", tool.name if tool else hardware.name, tool.version if tool else None,
                               seconds, run["reasons"][0])
        return _finish(verdict, [f"unverifiable: {run['reasons'][0]}"], started)
    steps[numerics] = step("failed" if run["reasons"] else "passed", tool.name if tool else hardware.name,
                           tool.version if tool else None, seconds, run["reasons"][0] if run["reasons"] else None,
                           run["check"])
    if not run["reasons"]:
        verdict["verified_on"] = f"cpu:{tool.name}-{tool.version}" if tool else hardware_slug(hardware.name)
    if verdict["timings"] is None:
        verdict["timings_note"] = _no_timings_reason(hardware, run, tool, backend.accelerator)
    else:
        from opforge.harness.profile import timer_tool

        steps["profile"] = step("passed", *timer_tool(hardware.device), None)
    return _finish(verdict, run["reasons"], started)


def _numerics(hardware: Hardware) -> str:
    return "cpu_run" if hardware.device == "cpu" else "device_run"


def _build_steps(backend, build: dict) -> dict:
    """The step records one build job gives: those the backend decided itself (a skipped compile,
    Ascend's frontend_compile, a failed launch rule), else the compile step from its reasons."""
    decided = dict(build.get("steps") or {})
    if "compile" not in decided:
        tool, reasons = backend.compiler(), build.get("reasons") or []
        if decided.get("static", {}).get("status") == "failed":  # a launch rule the grid broke: nothing compiled
            decided["compile"] = step("skipped", tool.name, tool.version, reason=ladder.NOT_REACHED)
        else:
            decided["compile"] = step("failed" if reasons else "passed", tool.name, tool.version,
                                      build.get("seconds"), str(reasons[0]) if reasons else None,
                                      "build" if reasons else None)
    if "static" in decided:  # the static step keeps its own timing; only its verdict changes
        decided["static"] = {**decided["static"], "version": dist_version("opforge")}
    return decided


def _record_job(verdict: dict, mode: str, result: JobResult) -> str | None:
    """Usage and warnings of one job into the verdict; the job's own failure as one line, if any."""
    _add_usage(verdict, mode, result)
    for warning in result.warnings:  # an isolation this runtime could not give the job
        if warning not in verdict.setdefault("warnings", []):
            verdict["warnings"].append(warning)
    return _job_problem(result)


def _outputs(result: JobResult) -> list | None:
    if "outputs.pt" in result.output_errors:
        return None
    return judge.load_outputs(result.outputs.get("outputs.pt"))


def _judge_run(spec: OpSpec, material: judge.Material, payload: dict, outputs: list | None,
               hardware: Hardware, options: VerifyOptions, started: float) -> dict:
    atol, rtol = spec.meta.get("atol"), spec.meta.get("rtol")
    n_calls = len(payload.get("calls") or [])
    findings = evidence.judge_calls(material, payload, outputs, atol, rtol)
    timings = None
    bench = payload.get("bench")
    if bench and outputs is not None:
        evidence.judge_bench(findings, material, bench, outputs[n_calls:], atol, rtol)
        if not findings.reasons and options.profile:
            from opforge.harness.profile import profile_reference, timings as make_timings
            main = material.cases[judge.main_case(material)]
            timings = make_timings(bench["kernel_ms"], profile_reference(material.refs[0], main.inputs))
    return evidence.run_result(findings, material, started, timings, ran=not payload.get("rejected"))


def _add_usage(verdict: dict, mode: str, result: JobResult) -> None:
    verdict.setdefault("jobs", {})[mode] = {
        "wall_s": round(result.wall_s, 3), "cpu_s": round(result.cpu_s, 3),
        "peak_rss_mb": round(result.peak_rss_mb, 1), "runtime": result.runtime}


def _write_temp(data: bytes, suffix: str) -> str:
    import tempfile

    fd, path = tempfile.mkstemp(prefix="opforge-job-", suffix=suffix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def _base_verdict(spec: OpSpec, hw: Hardware, source: str, options: VerifyOptions, seed: int, runtime: str) -> dict:
    verdict = {
        "correct": False, "reasons": [], "op": spec.name, "backend": options.backend,
        "spec_path": str(spec.path), "spec_sha256": spec.sha256,
        "candidate_sha256": hashlib.sha256(source.encode()).hexdigest(),
        "device": hw.device, "hardware": hw.fingerprint,
        "sizes": {"declared": spec.sizes_declared, "used": spec.sizes_used, "mode": spec.mode, **(spec.cost or {})},
        "seed": seed, "trials": options.trials, "variants": [], "stress": [], "calls": 0, "anticheat": {}, "launches": {},
        "build": None, "timings": None, "timings_note": None, "sandbox": runtime,
        "level": None, "verified_on": None, "steps": {}, "failed_step": None,
    }
    if runtime == "none":
        verdict["warnings"] = ["sandbox 'none': the candidate ran in a plain child process, not isolated"]
    return verdict


def _job_problem(result: JobResult) -> str | None:
    """One reason line when the job itself failed (as opposed to judging the candidate)."""
    if result.cause == "timeout":
        return f"timeout: the job exceeded its time limit ({result.wall_s:.0f} s)"
    if result.cause:
        tail = (result.stderr.strip().splitlines() or [""])[-1][:200]
        return f"{result.cause}: the job died (exit {result.exit_code}) {tail}".rstrip()
    if "error" in result.payload:  # the candidate's process died on its way: its words are data
        return f"runtime-error: the candidate's process failed: {str(result.payload['error'])[:300]}"
    if why := result.output_errors.get("outputs.pt"):  # over Material.output_cap, a link...: left unread
        return f"runtime-error: the candidate's process left an outputs file the judge refuses: outputs.pt {why}"
    return None


def _no_timings_reason(hw: Hardware, payload: dict, tool=None, accel: str = "GPU") -> str:
    if hw.device == "cpu":
        used = f"{tool.name} {tool.version}" if tool else "the CPU"
        return f"no {accel}: timings are measured only on a{'n' if accel == 'NPU' else ''} {accel} (this run used {used})"
    if payload.get("reasons"):
        return "not profiled: the candidate is incorrect"
    return "not profiled: profiling was turned off"


def _step_order(verdict: dict) -> tuple[str, ...]:
    """The steps of a verdict in ladder order: its backend's (a backend may add some: Ascend's
    frontend_compile), else the plugin interface's default."""
    backend = BACKENDS.get(verdict.get("backend"))
    if backend is None or backend.module is None:
        return BackendPlugin.steps
    return tuple(backend.plugin().steps)


def _unreached(verdict: dict, name: str, reasons: list[str]) -> dict:
    """Why a step of the ladder was not run, when nothing else said."""
    if name == "device_run" and verdict["device"] == "cpu":
        backend = BACKENDS.get(verdict.get("backend"))
        accel = backend.plugin().accelerator if backend is not None and backend.module else "GPU"
        return step("skipped", reason=f"no {accel}: this verification ran on the CPU")
    if name == "cpu_run" and verdict["device"] != "cpu":
        return step("skipped", reason="the numerics ran on the device")
    if name == "profile" and not reasons:
        return step("skipped", reason=verdict.get("timings_note") or "not profiled")
    failed = ladder.any_failed(verdict["steps"])
    return step("skipped", reason=ladder.NOT_REACHED if failed
                else f"not reached: {reasons[0][:120]}" if reasons else "not reached")


def _finish(verdict: dict, reasons: list[str], started: float) -> dict:
    """Complete the verdict: every step of the ladder (unreached ones skipped), the failed step named
    once (its record says which check failed), the level, correctness."""
    steps = verdict["steps"]
    numerics = ladder.numerics_passed(steps)
    verdict.update(reasons=list(reasons), correct=not reasons and numerics)
    if verdict["timings"] is None and verdict["timings_note"] is None:
        verdict["timings_note"] = "not profiled" if not reasons else "not profiled: the kernel was not verified"
    order = _step_order(verdict)
    for name in order:
        if name not in steps:
            steps[name] = _unreached(verdict, name, reasons)
    verdict["steps"] = {name: steps[name] for name in (*order, *sorted(set(steps) - set(order)))}
    if (failed := ladder.first_failed(verdict["steps"])) is not None:
        verdict["steps"][failed] = ladder.with_check(verdict["steps"][failed], failed)
    verdict["failed_step"] = failed
    verdict["level"] = ladder.level_of(verdict["steps"])
    verdict["elapsed_s"] = round(time.perf_counter() - started, 3)
    return verdict
