"""`opforge` command line: parse, call the library, render. Exit codes are a contract:
verify: 0 correct, 1 incorrect, 2 bad input, 3 cannot be verified on this machine (only `static` or
`compiled` reachable); other commands: 0 ok, 2 bad input."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from opforge.harness.errors import OpforgeError
from opforge.harness import intake
from opforge.harness.ladder import EXIT_UNVERIFIABLE, exit_code
from opforge.reward import commands as reward_commands
from opforge.sandbox.errors import SandboxError
from opforge.sandbox.interrupt import exit_code as signal_exit, raise_on_signals, signal_name

# Piped output (CI logs, tests) gets a wide console instead of rich's 80-column default.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)


def _parser(argv: list[str]) -> argparse.ArgumentParser:
    verify_flags, loop_flags = _option_flags(argv)
    p = argparse.ArgumentParser(prog="opforge", description="Verified, profiled, versioned kernels from PyTorch op specs.")
    p.add_argument("--db", help="registry path (default: $OPFORGE_DB, else ./.opforge/opforge.db)")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify a candidate kernel against an op spec", epilog=intake.verify_epilog(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("spec", metavar="SPEC", help=intake.SPEC_HELP)
    v.add_argument("kernel", metavar="KERNEL", help=intake.KERNEL_HELP)
    v.add_argument("--json", action="store_true", help="print the verdict as JSON")
    _add_flags(v, verify_flags)
    k = sub.add_parser("kernels", help="list recorded candidates and their latest verdicts")
    k.add_argument("op", nargs="?")
    k.add_argument("--limit", type=int, default=50)
    s = sub.add_parser("show", help="show one candidate: source and every evaluation")
    s.add_argument("id", type=int)
    s.add_argument("--json", action="store_true")
    pr = sub.add_parser("promote", help="make a verified candidate the active version of its op")
    pr.add_argument("id", type=int, nargs="?")
    pr.add_argument("--note")
    pr.add_argument("--force", action="store_true", help="promote even if timed slower than PyTorch eager")
    pr.add_argument("--auto", action="store_true", help="promote the best promotable candidate of every op")
    pr.add_argument("--op", help="with --auto: only this op")
    ex = sub.add_parser("export", help="render the promoted versions as an installable op library")
    ex.add_argument("--out", default="kernels_generated", help="project directory to write (default kernels_generated)")
    ex.add_argument("--name", default="kernels_generated", help="import name and torch.ops namespace")
    ex.add_argument("--wheel", action="store_true", help="also build the wheel (offline) into OUT/dist/")
    ex.add_argument("--cuda-archs", metavar="LIST",
                    help="with --wheel: prebuild CUDA kernels for these architectures, e.g. 90,100 "
                         "(default $OPFORGE_CUDA_ARCHS, else this machine's GPUs)")
    ex.add_argument("--json", action="store_true", help="print what was exported as JSON")
    _run_parser(sub, loop_flags)
    _batch_parser(sub, loop_flags)
    sub.add_parser("runs", help="list agent runs").add_argument("op", nargs="?")
    sub.add_parser("cancel", help="cancel a run (its process is stopped, with the job it runs)").add_argument("run_key")
    u = sub.add_parser("ui", help="start the Streamlit workbench (request, watch, review, export)")
    u.add_argument("--port", type=int, default=8501)
    u.add_argument("--address", default="127.0.0.1", help="listen address (default loopback: the server runs specs)")
    reward_commands.add_parsers(sub)  # reward, reward-server, reward-dataset, export-dataset
    return p


def _option_flags(argv: list[str]) -> tuple[tuple, tuple]:
    """(verify's flags, the loop's flags) from agents/options.py. Their defaults live in dataclasses
    whose modules import torch (~2 s), so only an argv naming verify, run or batch pays for them."""
    if not {"verify", "run", "batch"} & set(argv):
        return (), ()
    from opforge.agents.options import LOOP_FLAGS, VERIFY_FLAGS

    return VERIFY_FLAGS, LOOP_FLAGS


def _add_flags(parser: argparse.ArgumentParser, flags) -> None:
    """Flags bound to option fields: argparse holds no default, so a flag left out (None) takes the
    field's own, and a bad value is the field's one-line error."""
    for flag in flags:
        default = "" if flag.default is None else f" (default {flag.default})"
        parser.add_argument(flag.flag, type=flag.type, metavar=flag.metavar, help=flag.help + default)


def _run_parser(sub, loop_flags) -> None:
    r = sub.add_parser("run", help="draft, verify and keep the best kernel for an op spec (the agent loop)")
    r.add_argument("spec", nargs="?")
    r.add_argument("--resume", metavar="RUN_ID", help="continue a run that was interrupted or killed")
    r.add_argument("--json", action="store_true", help="print the run summary as JSON")
    r.add_argument("--run-key", help="use this run key instead of a fresh one (the UI picks it to follow the run)")
    _add_flags(r, loop_flags)


def _batch_parser(sub, loop_flags) -> None:
    b = sub.add_parser("batch", help="run the agent loop over an op list (local processes or a Ray cluster)")
    b.add_argument("specs", nargs="*", metavar="SPEC", help="spec files or directories of them (e.g. ops/)")
    b.add_argument("--list", metavar="FILE", help="a file with one spec path a line")
    b.add_argument("--jobs", type=int, help="ops at once (default: 1 locally; every CPU, or GPU, of a Ray cluster)")
    b.add_argument("--executor", choices=["local", "ray"], default="local")
    b.add_argument("--address", help="Ray cluster address, e.g. 10.0.0.1:6379 (default: start a local Ray instance)")
    b.add_argument("--op-timeout", type=float, default=3600.0, help="seconds before a hung op is stopped (default 3600)")
    b.add_argument("--force", action="store_true", help="run ops again that already have a verified kernel")
    b.add_argument("--report", help="report file, .json or .csv (default: reports/ beside the registry)")
    b.add_argument("--no-fail", action="store_true", help="exit 0 even when some ops failed")
    b.add_argument("--json", action="store_true", help="print the report as JSON instead of the live view and table")
    _add_flags(b, loop_flags)  # the same as run's, for each op's run


def cmd_verify(args: argparse.Namespace) -> int:
    from opforge.agents.options import verify_options
    from opforge.harness.verify import prepare, verify_source
    from opforge.registry.recording import record_verification

    source = intake.check_verify_input(args.spec, args.kernel, args.backend)  # main() did too, before torch loaded
    options = verify_options(vars(args))
    spec, hardware = prepare(args.spec, options)
    with _registry(args.db) as reg:
        verdict = verify_source(spec, hardware, source, options)
        ids = record_verification(reg, spec, source, verdict, hardware, drafter="user")
    verdict_out = verdict | {"candidate_id": ids[0], "evaluation_id": ids[1]}
    if args.json:
        print(json.dumps(verdict_out, indent=2, default=str))
    else:
        render_verdict(verdict_out)
    return exit_code(verdict)


def render_verdict(v: dict) -> None:
    """The verdict as text: the failed step is named once, in its own row with the check that failed."""
    status = ("[bold green]CORRECT[/]" if v["correct"] else "[bold yellow]NOT VERIFIABLE HERE[/]"
              if exit_code(v) == EXIT_UNVERIFIABLE else "[bold red]INCORRECT[/]")
    out.print(f"{v['op']} ({v['backend']}, {v['hardware']}): {status}  "
              f"candidate #{v['candidate_id']}, evaluation #{v['evaluation_id']}")
    out.print(f"  level: {v.get('level') or '—'}" + (f" (verified on {v['verified_on']})" if v.get("verified_on") else ""))
    from opforge.registry.levels import step_rows

    for row in step_rows(v):
        out.print(f"    {row.line()}", markup=False)
    cross = "[yellow]–[/]" if exit_code(v) == EXIT_UNVERIFIABLE else "[red]✗[/]"  # could not run here: no failure
    for reason in v["reasons"]:
        out.print(f"  {cross} {reason}", markup=True)
    if v["variants"]:
        table = Table("variant", "shapes", "trials", "max abs err", "max rel err", "atol", "rtol", "ok")
        for var in v["variants"]:
            table.add_row(str(var["index"]), " ".join(str(s) for s in var["shapes"]), str(var["trials"]),
                          f"{var['max_abs_err']:.2e}", f"{var['max_rel_err']:.2e}", f"{var['atol']:g}",
                          f"{var['rtol']:g}", "✓" if var["passed"] else "✗")
        out.print(table)
    for kern in (v.get("build") or {}).get("kernels", []):
        if "target" in kern:  # an Ascend front-end record: no registers or shared memory to report
            ub = f", {kern['required_ub_bits'] // 8} B of unified buffer" if kern.get("required_ub_bits") else ""
            out.print(f"  {kern['kernel']} for {kern['target']}: {kern.get('mix_mode') or '?'} kernel, "
                      f"bishengir-compile: {kern.get('pipeline')}{ub}", markup=False)
            continue
        warps = f", {kern['num_warps']} warps" if "num_warps" in kern else ""
        barriers = f", {kern['barriers']} barriers" if kern.get("barriers") is not None else ""
        out.print(f"  {kern['kernel']} on {kern['arch']}: {kern.get('registers')} registers, "
                  f"{kern.get('spill_stores')} B spilled, {kern.get('shared_bytes')} B shared{warps}{barriers}",
                  markup=False)
    used = v["sizes"]["used"]
    if used != v["sizes"]["declared"]:
        out.print(f"  sizes shrunk for the CPU: {used} (declared {v['sizes']['declared']})")
    timings = v.get("timings")
    if timings:
        out.print(f"  {timings['kernel_ms']:.4f} ms; {timings['speedup_eager']:.2f}x eager"
                  + (f", {timings['speedup_compile']:.2f}x torch.compile" if timings.get("speedup_compile") else ""))
    else:
        out.print(f"  timings: {v.get('timings_note')}")
    for warning in v.get("warnings", []):
        out.print(f"  [yellow]warning:[/] {warning}")


def cmd_kernels(args: argparse.Namespace) -> int:
    from opforge.registry.levels import failure_label, level_label

    with _registry(args.db) as reg:
        rows, db = reg.list_kernels(args.op, limit=args.limit), reg.path
    if not rows:
        out.print(intake.nothing_recorded(db, args.op), markup=False)
        return 0
    table = Table("id", "op", "backend", "drafter", "verdict", "level", "hardware", "ms", "speedup", "active", "created")
    for r in rows:
        verdict = "—" if r.correct is None else "[green]correct[/]" if r.correct else \
            f"[red]{failure_label(r.failed_step, r.failed_check)}[/]" if r.failed_step else "[yellow]not verifiable here[/]"
        table.add_row(str(r.candidate_id), r.op, r.backend, r.drafter, verdict, level_label(r.level), r.hardware or "—",
                      f"{r.kernel_ms:.4f}" if r.kernel_ms else "—",
                      f"{r.speedup_eager:.2f}x" if r.speedup_eager else "—", "★" if r.active else "",
                      r.created_at.strftime("%Y-%m-%d %H:%M"))
    out.print(table)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _registry(args.db) as reg:
        cand = reg.get_candidate(args.id)
    if cand is None:
        raise OpforgeError(f"no candidate with id {args.id}")
    if args.json:
        print(json.dumps({"id": cand.id, "op": cand.op, "backend": cand.backend, "drafter": cand.drafter,
                          "source": cand.source,
                          "evaluations": [e.verdict | {"level": e.level, "verified_on": e.verified_on}
                                          for e in cand.evaluations]},
                         indent=2, default=str))
        return 0
    from rich.syntax import Syntax

    from opforge.registry.levels import level_label, step_rows

    out.print(f"candidate #{cand.id}: {cand.op} ({cand.backend}, drafted by {cand.drafter}), spec {cand.spec_path}")
    out.print(Syntax(cand.source, "python", line_numbers=True))
    for ev in cand.evaluations:
        mark = "[green]correct[/]" if ev.correct else "[red]incorrect[/]" if ev.failed_step else \
            "[yellow]not verifiable here[/]"  # its step rows name the failed step
        out.print(f"evaluation #{ev.id} on {ev.hardware} ({ev.created_at:%Y-%m-%d %H:%M}): {mark}, "
                  f"level {level_label(ev.level, ev.verified_on)}", markup=True)
        for row in step_rows(ev.verdict):
            out.print(f"  {row.line()}", markup=False)
        for reason in ev.reasons:
            out.print(f"  {'✗' if ev.failed_step else '–'} {reason}")
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    if (args.id is None) == (not args.auto):
        raise OpforgeError("give a candidate ID, or --auto (not both)")
    with _registry(args.db) as reg:
        if args.auto:
            versions = reg.promote_auto(args.op)
        else:
            versions = [reg.promote(args.id, note=args.note, force=args.force)]
    for version in versions:
        out.print(f"{version.op} v{version.number} ({version.backend}, {version.hardware}) is now candidate #{version.candidate_id}")
    if not versions:
        out.print("nothing to promote: every op's best promotable candidate is already active")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from opforge.exporter import export_library

    with _registry(args.db) as reg:
        result = export_library(reg, Path(args.out), name=args.name, wheel=args.wheel, cuda_archs=args.cuda_archs)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, default=str))
        return 0
    table = Table("op", "version", "candidate", "kernels (backend, verified on, level)", "speedup vs eager")
    for op in result.ops:
        table.add_row(op.name, f"v{op.version}", f"#{op.candidate_id}", ", ".join(op.kernels),
                      f"{op.speedup_eager:.2f}x" if op.speedup_eager else "not timed")
    out.print(table)
    for note in result.notes:
        out.print(f"[yellow]note:[/] {note}")
    out.print(f"wrote {result.name} ({len(result.ops)} ops) to {result.out}"
              + (f"; wheel {result.wheel}" if result.wheel else "") + f"\n  install: pip install {result.out}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    if not args.spec and not args.resume:
        raise OpforgeError("give a SPEC to start a run, or --resume RUN_ID")
    from opforge.agents.run import interrupted_line

    quiet, started = args.json, {}

    def show(event: dict) -> None:
        started.setdefault("run_key", event.get("run_key"))
        if not quiet:
            out.print(f"[dim]{time.strftime('%H:%M:%S')}[/] [cyan]{event['node']:>8}[/] {event['message']}",
                      markup=True, highlight=False, soft_wrap=True)

    with _registry(args.db) as reg:
        try:
            summary = _run_or_resume(args, reg, show)
        except KeyboardInterrupt as exc:  # the job was stopped on the way out, the run recorded (agents/run.py)
            print(f"opforge: {interrupted_line(reg, started.get('run_key'), exc)}", file=sys.stderr)
            return signal_exit(exc)
    if args.json:
        print(json.dumps(summary.__dict__, indent=2, default=str))
    else:
        best = f"best candidate #{summary.best_candidate_id}" if summary.best_candidate_id else "no verified kernel"
        out.print(f"run {summary.run_key}: {summary.status}, {best}; {summary.stop_reason}")
    return 0 if summary.best_candidate_id else 1


def _run_or_resume(args: argparse.Namespace, reg: Registry, show):
    from opforge.agents.options import run_options
    from opforge.agents.run import resume_run, start_run

    if args.resume:
        return resume_run(args.resume, reg, on_event=show)
    return start_run(args.spec, run_options(vars(args), run_key=args.run_key), reg, on_event=show)


def cmd_runs(args: argparse.Namespace) -> int:
    with _registry(args.db) as reg:
        runs = reg.list_runs(args.op)
    if not runs:
        out.print("no runs yet — try: opforge run ops/softmax.py")
        return 0
    table = Table("run", "op", "drafter", "status", "best", "tokens", "stop reason", "started")
    for r in runs:
        table.add_row(r.run_key, r.op, r.drafter, r.status, f"#{r.best_candidate_id}" if r.best_candidate_id else "—",
                      str(r.tokens), r.stop_reason or r.error or "", r.started_at.strftime("%Y-%m-%d %H:%M"))
    out.print(table)
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    from opforge.agents.run import cancel_run

    with _registry(args.db) as reg:
        run = cancel_run(args.run_key, reg)
    out.print(f"run {run.run_key} cancelled; the process driving it is stopped, with the job it runs")
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    import subprocess

    from opforge.registry import resolve_db_path
    from opforge.ui.server import server_command

    argv, env = server_command(resolve_db_path(args.db), args.port, args.address)
    return subprocess.call(argv, env=env)


def cmd_batch(args: argparse.Namespace) -> int:
    from opforge.agents.batch import BatchOptions, default_report_path, resolve_specs, run_batch, write_report
    from opforge.agents.batch.report import check_report_path
    from opforge.agents.batch.view import BatchProgress, report_table, summary_line
    from opforge.agents.options import run_options
    from opforge.registry import Registry, resolve_db_path

    options = BatchOptions(run=run_options(vars(args)), jobs=args.jobs, executor=args.executor, address=args.address,
                           op_timeout_s=args.op_timeout, force=args.force)
    paths, db = resolve_specs(args.specs, args.list), resolve_db_path(args.db)
    if args.report:
        check_report_path(Path(args.report))
    with Registry(db) as reg:
        try:
            if args.json:
                report = run_batch(paths, options, reg)
            else:
                with BatchProgress(out) as view:
                    report = run_batch(paths, options, reg, on_event=view)
        except KeyboardInterrupt as exc:
            print(f"opforge: {signal_name(exc)}: batch interrupted; the same command resumes it", file=sys.stderr)
            return signal_exit(exc)
    path = write_report(report, args.report or default_report_path(db, report))
    if args.json:
        print(json.dumps(report.to_dict() | {"report": str(path)}, indent=2, default=str))
    else:
        out.print(report_table(report))
        out.print(f"{summary_line(report)}; report: {path}")
    return 1 if report.failed and not args.no_fail else 0


def _registry(db: str | None):  # imported here, like every library past argparse: SQLAlchemy alone
    from opforge.registry import Registry, resolve_db_path  # costs ~1 s, which refusing bad input never pays

    return Registry(resolve_db_path(db))


COMMANDS = {"verify": cmd_verify, "kernels": cmd_kernels, "show": cmd_show, "promote": cmd_promote, "export": cmd_export,
            "run": cmd_run, "runs": cmd_runs, "cancel": cmd_cancel, "ui": cmd_ui, "batch": cmd_batch,
            **reward_commands.COMMANDS}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        intake.check_verify_argv(argv)  # before the parser, whose verify flags import torch and the harness (~5 s)
        args = _parser(argv).parse_args(argv)
        with raise_on_signals():  # SIGTERM too unwinds: a sandbox stops its job (sandbox/interrupt.py)
            return COMMANDS[args.command](args)
    except Exception as exc:  # bad input of any layer is one line and exit 2; anything else is a bug: its traceback
        registry = sys.modules.get("opforge.registry")  # not loaded: no RegistryError can have been raised
        if not isinstance(exc, (OpforgeError, SandboxError, *([registry.RegistryError] if registry else []))):
            raise
        print(f"opforge: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"opforge: {signal_name(exc)}: interrupted", file=sys.stderr)
        return signal_exit(exc)


if __name__ == "__main__":
    sys.exit(main())
