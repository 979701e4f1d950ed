"""The offline expert drafter: candidates generated from the reference's ATen graph by
opforge.codegen, with the emitters of the request's backend (its emit/ package), tried in order.

Each emitter exposes a tuning space; round r drafts the next `n` configurations, so the loop
evaluates several and keeps the best (the chosen configuration is in the candidate's meta, with the
family and the number of kernels: more than one for a partitioned program, codegen/partition/). When
nothing accepts the graph the draft says "unsupported: ..." with the ATen ops, and the run stops
so an LLM drafter can take over."""
from __future__ import annotations

from opforge.agents.drafters.base import Draft, DraftRequest
from opforge.codegen import Unsupported, generate


class ExpertDrafter:
    name = "expert"

    def describe(self) -> str:
        return "offline expert drafter (kernels generated from the reference's ATen graph)"

    def draft(self, request: DraftRequest) -> list[Draft]:
        try:
            kernel = generate(request.spec_source, request.op, request.sizes, backend=request.backend)
        except Unsupported as exc:
            return [Draft(source=None, drafter=self.name, problem=f"unsupported: {exc}", meta={"exhausted": True})]
        # Without a GPU (Triton's interpreter, the CUDA emulator) there are no timings to rank
        # configurations by: one per round is enough.
        n = 1 if request.hardware.startswith("cpu/") else request.n
        configs = kernel.space[request.round * n:(request.round + 1) * n]
        return [Draft(source=kernel.render(config), drafter=self.name,
                      meta={"family": kernel.family, "kernels": kernel.kernels, "config": config}) for config in configs]
