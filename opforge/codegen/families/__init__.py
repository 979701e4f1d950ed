"""The per-family plans, backend-neutral: what each graph computes and where each value lives, read
by every backend's emitter (codegen/emit/)."""
