"""The verification harness: op specs, backends (build, verify, profile), anti-cheat checks, verdicts."""
