"""The pointwise family: elementwise chains with broadcasting inputs (plan.py)."""
