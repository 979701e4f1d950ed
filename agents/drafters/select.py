"""Choosing the drafter: `--drafter llm|expert`, else the LLM when an endpoint is configured,
else the offline expert (and the run says so)."""
from __future__ import annotations

from agents.drafters.base import Drafter, DrafterError


def select_drafter(name: str | None, endpoint: dict | None = None) -> tuple[Drafter, str | None]:
    """(drafter, a note for the user or None). `endpoint` ({"base_url", "model"}, as a run records
    them) wins over the environment, so a resumed LLM run talks to the model it started with; the
    API key always comes from the environment (it is never written down)."""
    import os

    from agents.drafters.llm import LLMConfig, LLMDrafter

    environ = dict(os.environ)
    if endpoint:
        environ |= {"OPFORGE_LLM_BASE_URL": endpoint["base_url"], "OPFORGE_LLM_MODEL": endpoint["model"]}
    config = LLMConfig.from_env(environ)
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
