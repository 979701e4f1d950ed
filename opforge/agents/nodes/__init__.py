"""Graph nodes: each takes the state and the run context and returns a partial state update."""
