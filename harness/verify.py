"""`verify(spec, kernel)`: load the spec, read the candidate, static checks, then the build and run
jobs in the sandbox, merged into one verdict dict (the contract `opforge verify --json` prints).

This process never imports the candidate: it parses its source, and the worker does the rest.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from harness.backends import get_backend
from harness.errors import CandidateError
from harness.hardware import Hardware, detect
from harness.spec import OpSpec, load_spec
from harness.static_checks import check_source
from sandbox import Job, JobResult, Sandbox, get_sandbox

CPU_MAX_ELEMENTS = int(os.environ.get("OPFORGE_CPU_MAX_ELEMENTS", 1 << 19))
CPU_MAX_BYTES = 2 << 30
GPU_MAX_BYTES = 32 << 30


@dataclass
class VerifyOptions:
    backend: str = "triton"
    device: str | None = None  # None: the GPU when there is one; "cpu" forces the interpreter
    trials: int = 5
    seed: int | None = None  # None: a fresh secret seed, so a candidate cannot predict its inputs
    timeout_s: float = 600.0
    sandbox: str | None = None  # docker | jail | none; None: $OPFORGE_SANDBOX, else auto
    arch: int | None = None  # AOT target; None: the GPU's own, else sm_90
    profile: bool = True
    # Let statically rejected code run anyway: only for testing the sandbox against hostile code.
    skip_static: bool = False


def prepare(spec_path: str | Path, options: VerifyOptions) -> tuple[OpSpec, Hardware]:
    """Validate the spec for the hardware at hand (raises SpecError / BackendUnavailable)."""
    get_backend(options.backend)
    hardware = detect(force_cpu=options.device == "cpu")
    max_elements = CPU_MAX_ELEMENTS if hardware.device == "cpu" else None
    max_bytes = CPU_MAX_BYTES if hardware.device == "cpu" else GPU_MAX_BYTES
    return load_spec(spec_path, max_elements=max_elements, max_bytes=max_bytes), hardware


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
    static = check_source(source, float32_spec=spec.is_float32)
    if options.skip_static:
        verdict.setdefault("warnings", []).append(f"static checks skipped ({len(static.reasons)} findings)")
    elif static.reasons:
        stage = "load" if static.reasons[0].startswith("syntax-error") else "static"
        return _finish(verdict, stage, static.reasons, started)
    payload = {"sizes": spec.sizes_used, "seed": seed, "trials": options.trials, "device": hardware.device,
               "atol": spec.meta.get("atol"), "rtol": spec.meta.get("rtol"),
               "mutates": list(spec.meta.get("mutates", [])), "arch": options.arch or hardware.arch,
               "profile": options.profile}
    # On a GPU one process builds and runs; on the CPU the interpreted run needs its own process.
    modes = ["build", "run"] if hardware.device == "cpu" else ["verify"]
    files = {"spec.py": str(spec.path), "candidate.py": _write_source(source)}
    results: dict = {"build": None, "run": None}
    try:
        for mode in modes:
            result = sandbox.run(Job({**payload, "mode": mode}, files, options.timeout_s))
            _add_usage(verdict, mode, result)
            if problem := _job_problem(result):
                # the build job runs forward once to record launches: a hang there is the forward's
                stage = "build" if mode == "build" and result.cause != "timeout" else "run"
                return _finish(verdict, stage, [problem], started)
            results.update({k: v for k, v in result.payload.items() if v is not None})
            if results["build"] and results["build"]["reasons"]:
                break
    finally:
        os.unlink(files["candidate.py"])
    build, run = results["build"], results["run"]
    verdict["build"] = {"target": f"sm_{payload['arch']}", "kernels": build["kernels"], "note": build.get("note")}
    if build["reasons"]:
        return _finish(verdict, "build", build["reasons"], started)
    verdict.update({k: run[k] for k in ("variants", "launches", "anticheat", "timings")})
    if verdict["timings"] is None:
        verdict["timings_note"] = _no_timings_reason(hardware, run)
    return _finish(verdict, run["stage"], run["reasons"], started)


def _add_usage(verdict: dict, mode: str, result: JobResult) -> None:
    verdict.setdefault("jobs", {})[mode] = {
        "wall_s": round(result.wall_s, 3), "cpu_s": round(result.cpu_s, 3),
        "peak_rss_mb": round(result.peak_rss_mb, 1), "runtime": result.runtime}


def _write_source(source: str) -> str:
    import tempfile

    fd, path = tempfile.mkstemp(prefix="opforge-candidate-", suffix=".py")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(source)
    return path


def _base_verdict(spec: OpSpec, hw: Hardware, source: str, options: VerifyOptions, seed: int, runtime: str) -> dict:
    verdict = {
        "correct": False, "stage": "load", "reasons": [], "op": spec.name, "backend": options.backend,
        "spec_path": str(spec.path), "spec_sha256": spec.sha256,
        "candidate_sha256": hashlib.sha256(source.encode()).hexdigest(),
        "device": hw.device, "hardware": hw.fingerprint,
        "sizes": {"declared": spec.sizes_declared, "used": spec.sizes_used},
        "seed": seed, "trials": options.trials, "variants": [], "anticheat": {}, "launches": {},
        "build": None, "timings": None, "timings_note": None, "sandbox": runtime,
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
    if "error" in result.payload:
        return f"harness-error: {result.payload['error']}"
    return None


def _no_timings_reason(hw: Hardware, payload: dict) -> str:
    if hw.device == "cpu":
        return "no GPU: timings are measured only on a GPU (this run used Triton's interpreter)"
    if payload.get("reasons"):
        return "not profiled: the candidate is incorrect"
    return "not profiled: profiling was turned off"


def _finish(verdict: dict, stage: str, reasons: list[str], started: float) -> dict:
    verdict.update(stage=stage, reasons=list(reasons), correct=not reasons)
    if not reasons and verdict["timings"] is None and verdict["timings_note"] is None:
        verdict["timings_note"] = "not profiled"
    verdict["elapsed_s"] = round(time.perf_counter() - started, 3)
    return verdict
