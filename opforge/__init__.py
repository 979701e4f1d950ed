"""opforge: an AI-agent workbench that turns PyTorch op specs into verified, profiled, versioned
kernels. Every part is a subpackage (opforge.agents, opforge.harness, opforge.sandbox, ...); this
file imports nothing, because the sandboxed worker imports opforge.harness.worker through it.
`opforge/ops` links to the repository's op suite (`ops/`), so the wheel ships the suite inside
the package and a checkout reads the same path."""
