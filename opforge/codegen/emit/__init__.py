"""One emitter per backend, each reading the families' plans: triton/ (every family), cuda/
(pointwise and rowwise)."""
