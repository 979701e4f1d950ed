"""Traceable references of engine ops that the serving suite (opforge/ops/serving/) does not hold, in the
layouts engines use: codegen/twins.py drafts from one of these (or a suite reference) where a spec's own
reference reads its sizes from the data and torch.export cannot trace it. Each file is a spec's Model only."""
