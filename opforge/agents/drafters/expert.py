"""The offline expert drafter: candidates generated from the reference's ATen graph by
opforge.codegen, with the emitters of the request's backend (its emit/ package), tried in order.

Each emitter exposes a tuning space; round r drafts the next `n` configurations, so the loop
evaluates several and keeps the best (the chosen configuration is in the candidate's meta, with the
family and the number of kernels: more than one for a partitioned program, codegen/partition/). A
reference torch.export cannot trace because it reads sizes from its data (`.item()` loops) is drafted
from a traceable twin that returns the same (codegen/twins.py). When nothing accepts the graph the
draft says "unsupported: ..." with the ATen ops, and the run stops so an LLM drafter can take over."""
from __future__ import annotations

from opforge.agents.drafters.base import Draft, DraftRequest
from opforge.codegen import Unsupported, generate, twins


class ExpertDrafter:
    name = "expert"

    def describe(self) -> str:
        return "offline expert drafter (kernels generated from the reference's ATen graph)"

    def draft(self, request: DraftRequest) -> list[Draft]:
        twin = None
        try:
            kernel = generate(request.spec_source, request.op, request.sizes, backend=request.backend)
        except Unsupported as exc:
            # torch.export stopped on a size read from the data (`.item()`): draft from a traceable
            # twin that returns the same on every input list (codegen/twins.py), else give up
            found = twins.find(request.spec_source, request.sizes) if twins.data_dependent(str(exc)) else None
            if found is None:
                why = "; no traceable twin (codegen/twins.py) returns the same" if twins.data_dependent(str(exc)) else ""
                return [Draft(source=None, drafter=self.name, problem=f"unsupported: {exc}{why}", meta={"exhausted": True})]
            try:
                kernel = generate(found[0], request.op, request.sizes, backend=request.backend)
            except Unsupported as again:
                return [Draft(source=None, drafter=self.name, problem=f"unsupported: {exc}; its twin "
                              f"{found[1].name}: {again}", meta={"exhausted": True})]
            twin = found[1].name
        # Without a GPU (Triton's interpreter, the CUDA emulator) there are no timings to rank
        # configurations by: one per round is enough.
        n = 1 if request.hardware.startswith("cpu/") else request.n
        configs = kernel.space[request.round * n:(request.round + 1) * n]
        note = (f"# The reference reads sizes from its data (torch.export cannot trace it): generated from the Model "
                f"of {twin}, which returns the same on every input list of the spec.\n") if twin else ""
        meta = {"family": kernel.family, "kernels": kernel.kernels} | ({"traced_through": twin} if twin else {})
        return [Draft(source=note + kernel.render(config), drafter=self.name, meta={**meta, "config": config})
                for config in configs]
