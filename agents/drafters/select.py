"""Choosing the drafter: `--drafter llm|expert`, else the LLM when an endpoint is configured,
else the offline expert (and the run says so)."""
from __future__ import annotations

from agents.drafters.base import Drafter, DrafterError


def select_drafter(name: str | None) -> tuple[Drafter, str | None]:
    """(drafter, a note for the user or None)."""
    from agents.drafters.llm import LLMConfig, LLMDrafter

    config = LLMConfig.from_env()
    if name not in (None, "llm", "expert"):
        raise DrafterError(f"unknown drafter '{name}' (known: llm, expert)")
    if name == "llm":
        if config is None:
            raise DrafterError("--drafter llm needs OPFORGE_LLM_BASE_URL and OPFORGE_LLM_MODEL (and OPENAI_API_KEY "
                               "for a hosted endpoint)")
        return LLMDrafter(config), None
    if name == "expert" or config is None:
        note = None if name == "expert" else "no LLM endpoint configured (OPFORGE_LLM_BASE_URL): using the offline expert drafter"
        return _expert(), note
    return LLMDrafter(config), None


def _expert() -> Drafter:
    from agents.drafters.expert import ExpertDrafter

    return ExpertDrafter()
