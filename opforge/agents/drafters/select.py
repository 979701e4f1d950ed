"""Choosing the drafter: `--drafter llm|expert`, else the LLM when an endpoint is configured,
else the offline expert (and the run says so). The drafters register in DRAFTERS, as backends do
in backends.py: a name checked against it gets the known names in its error."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from opforge.agents.drafters.base import Drafter, DrafterError

if TYPE_CHECKING:
    from opforge.agents.drafters.llm import LLMConfig


@dataclass(frozen=True)
class DrafterKind:
    name: str
    label: str  # how the workbench offers it
    # The drafter, given the endpoint configured (an LLMConfig, or None when none is).
    make: Callable[[LLMConfig | None], Drafter]
    needs_endpoint: bool = False  # drafts through an LLM endpoint: a base URL, a model (and a key)
    # What a resumed run must talk to again ({"base_url", "model"}, never the key); None: nothing.
    endpoint: Callable[[Drafter], dict | None] = lambda drafter: None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"drafter name must be a lowercase identifier: {self.name!r}")


def _expert(config: LLMConfig | None) -> Drafter:
    from opforge.agents.drafters.expert import ExpertDrafter

    return ExpertDrafter()


def _llm(config: LLMConfig | None) -> Drafter:
    from opforge.agents.drafters.llm import LLMDrafter

    if config is None:
        raise DrafterError("--drafter llm needs OPFORGE_LLM_BASE_URL and OPFORGE_LLM_MODEL (and OPENAI_API_KEY "
                           "for a hosted endpoint)")
    return LLMDrafter(config)


def _llm_endpoint(drafter: Drafter) -> dict:
    return {"base_url": drafter.config.base_url, "model": drafter.config.model}


DRAFTERS = {d.name: d for d in (
    DrafterKind("expert", "Offline expert (no LLM needed)", _expert),
    DrafterKind("llm", "LLM endpoint (OpenAI-compatible)", _llm, needs_endpoint=True, endpoint=_llm_endpoint),
)}


def check_drafter(name: str | None) -> None:
    """None (automatic) or a name of DRAFTERS; anything else is one line naming the known ones."""
    if name is not None and name not in DRAFTERS:
        raise DrafterError(f"unknown drafter {name!r} (known: {', '.join(DRAFTERS)})")


def select_drafter(name: str | None, endpoint: dict | None = None) -> tuple[Drafter, str | None]:
    """(drafter, a note for the user or None). `endpoint` ({"base_url", "model"}, as a run records
    them) wins over the environment, so a resumed LLM run talks to the model it started with; the
    API key always comes from the environment (it is never written down)."""
    from opforge.agents.drafters.llm import LLMConfig

    check_drafter(name)
    environ = dict(os.environ)
    if endpoint:
        environ |= {"OPFORGE_LLM_BASE_URL": endpoint["base_url"], "OPFORGE_LLM_MODEL": endpoint["model"]}
    config = LLMConfig.from_env(environ)
    note = None
    if name is None:
        name = "expert" if config is None else "llm"
        if config is None:
            note = "no LLM endpoint configured (OPFORGE_LLM_BASE_URL): using the offline expert drafter"
    return DRAFTERS[name].make(config), note


def recorded_endpoint(drafter: Drafter) -> dict | None:
    """What a run records so that its resume drafts with the same endpoint (None for the expert)."""
    kind = DRAFTERS.get(drafter.name)
    return kind.endpoint(drafter) if kind else None
