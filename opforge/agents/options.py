"""The options of `opforge verify`, `run` and `batch` as command-line flags: one table binding each
flag to the dataclass field that defines, defaults and validates it (RunOptions and Budget in
agents/config.py, VerifyOptions in harness/verify.py). `run` and `batch` add the same LOOP_FLAGS
(cli.py), the workbench builds its `opforge run` command with `run_argv`, and a flag left out
takes the field's default: no entry point holds a default or an option name of its own."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from typing import Any, Callable

from opforge.agents.config import Budget, RunOptions
from opforge.agents.drafters.select import DRAFTERS
from opforge.backends import BACKENDS
from opforge.harness.verify import DEVICES, VerifyOptions
from opforge.sandbox.select import RUNTIMES

OWNERS = {"run": RunOptions, "budget": Budget, "verify": VerifyOptions}


@dataclass(frozen=True)
class Flag:
    flag: str  # "--budget"
    owner: str  # a key of OWNERS: "run" (RunOptions itself), "budget" or "verify" (its parts)
    field: str  # the field of that dataclass, e.g. "rounds"
    type: Callable[[str], Any]
    help: str  # what it is; the default is added from the field
    metavar: str | None = None

    def __post_init__(self) -> None:
        if self.field not in OWNERS[self.owner].__dataclass_fields__:
            raise ValueError(f"{self.flag}: {OWNERS[self.owner].__name__} has no field {self.field!r}")

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    @property
    def default(self) -> Any:
        default = OWNERS[self.owner].__dataclass_fields__[self.field].default
        return None if default is MISSING else default

    def value(self, options: RunOptions) -> Any:
        return getattr(options if self.owner == "run" else getattr(options, self.owner), self.field)


_VERIFY = {f.flag: f for f in (
    Flag("--backend", "verify", "backend", str, f"kernel backend: {', '.join(BACKENDS)}", "NAME"),
    Flag("--device", "verify", "device", str, f"{' or '.join(DEVICES)}: auto is the GPU when there is one, "
         "cpu forces the CPU (Triton's interpreter, opforge's CUDA emulator)", "DEVICE"),
    Flag("--sandbox", "verify", "sandbox", str, f"isolation runtime: auto, {', '.join(RUNTIMES)} "
         "(default: $OPFORGE_SANDBOX, else auto: docker when an engine answers, else jail)", "RUNTIME"),
    Flag("--trials", "verify", "trials", int, "seeded trials per input variant", "N"),
    Flag("--seed", "verify", "seed", int, "base seed (default: a fresh secret one, recorded in the verdict)"),
    Flag("--timeout", "verify", "timeout_s", float, "seconds per sandbox job", "SECONDS"),
    Flag("--arch", "verify", "arch", int, "AOT compile target, e.g. 90 for sm_90 (default: the GPU's own, else 90)"),
)}
VERIFY_FLAGS = tuple(_VERIFY.values())
LOOP_FLAGS = (
    Flag("--drafter", "run", "drafter", str, f"{' or '.join(DRAFTERS)} (default: llm when OPFORGE_LLM_BASE_URL "
         "is set, else expert)", "NAME"),
    _VERIFY["--backend"],
    Flag("--budget", "budget", "rounds", int, "rounds of draft/evaluate/reflect", "ROUNDS"),
    Flag("--candidates", "budget", "candidates", int, "drafts per round", "N"),
    Flag("--wall", "budget", "wall_s", float, "wall-time budget in seconds", "SECONDS"),
    Flag("--tokens", "budget", "tokens", int, "LLM token budget", "N"),
    Flag("--target-speedup", "budget", "target_speedup", float, "stop once the best kernel is this much faster "
         "than eager (GPU)", "X"),
    *(_VERIFY[name] for name in ("--device", "--sandbox", "--trials", "--arch")),
)


def run_options(values: Mapping[str, Any], **run: Any) -> RunOptions:
    """RunOptions from LOOP_FLAGS values by dest (argparse's `vars(args)`, or a form's fields); a
    value missing or None takes the field's default. `run`: other RunOptions fields (run_key)."""
    given: dict[str, dict] = {"run": dict(run), "budget": {}, "verify": {}}
    for flag in LOOP_FLAGS:
        if values.get(flag.dest) is not None:
            given[flag.owner][flag.field] = values[flag.dest]
    return RunOptions(budget=Budget(**given["budget"]), verify=VerifyOptions(**given["verify"]), **given["run"])


def verify_options(values: Mapping[str, Any]) -> VerifyOptions:
    """VerifyOptions from VERIFY_FLAGS values by dest, as run_options."""
    return VerifyOptions(**{f.field: values[f.dest] for f in VERIFY_FLAGS if values.get(f.dest) is not None})


def run_argv(options: RunOptions) -> list[str]:
    """The LOOP_FLAGS that give `opforge run` (or `batch`) these options: every value that is set
    (None is the default). A budget or verify value that has no flag (a fixed seed) is refused
    rather than dropped."""
    flagged = {(f.owner, f.field) for f in LOOP_FLAGS}
    lost = [f"{owner}.{name}" for owner in ("budget", "verify")
            for name, spec in OWNERS[owner].__dataclass_fields__.items()
            if (owner, name) not in flagged and getattr(getattr(options, owner), name) != spec.default]
    if lost:
        raise ValueError(f"opforge run has no flag for {', '.join(lost)}")
    argv: list[str] = []
    for flag in LOOP_FLAGS:
        value = flag.value(options)
        if value is not None:
            argv += [flag.flag, str(value)]
    return argv
