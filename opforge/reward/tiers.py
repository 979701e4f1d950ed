"""The reward of a verdict: a typed tier, a number inside the tier's own band, and why.

Tiers, worst first (REWARD_VERSION names this table; a change to it is a new version):

    cheat     -1.0         an anti-cheat rule fired (at run time: the verdict's `anticheat`, but for
                           the rules on output values beside values that were wrong: VALUE_RULES; or a
                           rule that guards fairness or the sandbox, reported by the static checks or
                           the build: forbidden imports, calls, attributes, patched modules, host
                           compute, narrowed precision, the backend plugin's `cheat_rules`)
    unusable   0.0         no code, code that does not parse, no `ModelNew`, a file in the wrong format
    static     0.1         refused by the other static rules (launch shape, unsupported constructs)
    build      0.2         did not compile, or the module would not load
    wrong      0.3 - 0.6   compiled and ran, values wrong (or it crashed, hung, raced, read out of
                           bounds): 0.3 + 0.3 x the fraction of cases (variants and stress cases) that
                           passed, so partial credit never reaches `correct`
    correct    1.0 - 2.0   level `emulated` or better: 1.0, plus a speed term in [0, 1] only from a
                           device run timed against PyTorch eager and torch.compile in the same process
                           (`speed_term`: 0.5 at parity with the faster of the two, 1.0 at 2x faster)

A verdict that failed nothing but could not check numerics here (only `static`/`compiled`
reachable: exit 3) has no tier: its reward is `None` with `scored: false` and the reason, never a
guess. Every number here is a function of the verdict alone, so the same kernel and seed give the
same reward (wall times are reported beside it, never inside it)."""
from __future__ import annotations

import math

from opforge.harness.judge import ANTICHEAT
from opforge.harness.ladder import failed_check, promotable

REWARD_VERSION = "opforge-reward/1"
TIERS = ("cheat", "unusable", "static", "build", "wrong", "correct")
BANDS = {"cheat": (-1.0, -1.0), "unusable": (0.0, 0.0), "static": (0.1, 0.1), "build": (0.2, 0.2),
         "wrong": (0.3, 0.6), "correct": (1.0, 2.0)}
# Static rules that guard fairness or the sandbox, beyond the run-time anti-cheat names (judge.ANTICHEAT,
# which a static rule may also carry, alone or after a backend prefix: `cuda-host-compute`).
CHEAT_RULE_WORDS = ("forbidden", "patches", "patched")
# Anti-cheat rules about the output's values, not the code's conduct: all zeros, elements never written,
# one call's result again for other inputs. Beside wrong values they explain a wrong kernel (a masking or
# indexing bug trips them too), which is `wrong` with the credit of the cases it passed (none, for a
# cache: its replayed results fail the other inputs); when the values compared right they are `cheat`.
VALUE_RULES = ("constant-output", "partial-output", "cached-output")
# Static rules that say the file is no candidate at all (`unusable`, not `static`): it does not parse, or
# has no ModelNew to run.
UNUSABLE_CODES = ("syntax-error", "no-model-new")


def rank(tier: str) -> int:
    return TIERS.index(tier)


def reason_code(reason: str) -> str:
    """`forbidden-import: time` -> `forbidden-import`."""
    return reason.split(":", 1)[0].strip()


def is_cheat_rule(code: str, extra: frozenset[str] = frozenset()) -> bool:
    """A static rule whose breach is an attempt at the reward, not a kernel the hardware refuses."""
    if code in extra or code in ANTICHEAT or any(word in code for word in CHEAT_RULE_WORDS):
        return True
    return any(code.endswith("-" + name) for name in ANTICHEAT)


def cases(verdict: dict) -> tuple[int, int]:
    """(passed, total) over the verdict's input variants and stress cases; a case not run failed."""
    rows = [*(verdict.get("variants") or []), *(verdict.get("stress") or [])]
    passed = sum(1 for row in rows if row.get("passed") is True)
    skipped = (verdict.get("not_run") or {}).get("cases") or 0
    return passed, len(rows) + (skipped if isinstance(skipped, int) else 0)


def speed_term(timings: dict | None) -> float | None:
    """[0, 1] from a device run's timings: 0.5 at parity with the faster of eager and torch.compile,
    1.0 at 2x faster or better, 0.0 at 2x slower or worse; None without timings."""
    if not timings:
        return None
    speedups = [timings.get(k) for k in ("speedup_eager", "speedup_compile")]
    speedups = [float(s) for s in speedups if isinstance(s, (int, float)) and s > 0 and math.isfinite(s)]
    if not speedups:
        return None
    return round(0.5 + 0.5 * max(-1.0, min(1.0, math.log2(min(speedups)))), 6)


def classify(verdict: dict, cheat_rules: frozenset[str] = frozenset()) -> dict:
    """{tier, reward, why, fraction, speed} of a verdict; tier and reward None when it is unscored."""
    reasons = [str(r) for r in verdict.get("reasons") or []]
    codes = [reason_code(r) for r in reasons]
    fired = sorted(name for name, result in (verdict.get("anticheat") or {}).items() if result == "fail")
    step, check = verdict.get("failed_step"), failed_check(verdict)
    # a rule code of a failed step: the static checks', or one the build checks (the AOT build's PTX: tf32)
    values_wrong = "mismatch" in codes or check == "compare"
    static_cheats = [c for c in codes if is_cheat_rule(c, cheat_rules) and not (values_wrong and c in VALUE_RULES)
                     ] if step is not None else []
    conduct = [name for name in fired if name not in VALUE_RULES or not values_wrong]
    if conduct or static_cheats or (check == "anticheat" and not fired):
        return _tier("cheat", conduct or static_cheats or codes[:1])
    if verdict.get("correct") and promotable(verdict.get("level")):
        speed = speed_term(verdict.get("timings")) if verdict.get("level") in ("device", "profiled") else None
        return _tier("correct", [], speed=speed)
    if step is None or "reference-error" in codes:  # nothing to judge here, or the task's own reference fails
        return {"tier": None, "reward": None, "why": reasons[:1] or ["no step checked the numbers on this machine"],
                "fraction": None, "speed": None}
    if step == "draft" or (step == "static" and (check == "syntax" or any(c in UNUSABLE_CODES for c in codes))):
        return _tier("unusable", codes[:1])
    if step == "static":
        return _tier("static", codes[:1])
    if check in ("build", "load"):
        return _tier("build", codes[:1])
    passed, total = cases(verdict)
    return _tier("wrong", codes[:1], fraction=(passed / total) if total else 0.0)


def _tier(tier: str, why: list[str], fraction: float | None = None, speed: float | None = None) -> dict:
    low, high = BANDS[tier]
    reward = low + (high - low) * (fraction or 0.0) if tier == "wrong" else low + (speed or 0.0) * (high - low)
    if tier == "wrong":
        reward = min(reward, high)  # every case passed but the verdict is still wrong (a later check): the top of the band
    return {"tier": tier, "reward": round(reward, 6), "why": why,
            "fraction": None if fraction is None else round(fraction, 6), "speed": speed}
