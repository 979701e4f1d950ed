"""The scatter family: index writes into forward arguments updated in place (a KV-cache write), read
from the graph's aten.index_put nodes with their integer index tensors and an optional boolean keep
mask in front (plan.py)."""
