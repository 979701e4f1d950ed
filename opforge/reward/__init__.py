"""The verdict as a reinforcement-learning reward: typed tiers (tiers.py), one scorer (score.py) and
the interfaces training frameworks call (a Gymnasium environment, verl's reward function, an HTTP
reward service), over a dataset of tasks. docs/reward.md is the reader's guide.

Gymnasium: importing opforge.reward.gym_env registers ENV_ID; so does importing this package when
gymnasium is already imported (gymnasium's own import costs ~0.2 s, which the CLI must not pay for
every command), and gymnasium.make("opforge.reward.gym_env:opforge/Kernel-v0") needs no import."""
import sys

ENV_ID = "opforge/Kernel-v0"
ENTRY_POINT = "opforge.reward.gym_env:KernelEnv"


def register_env() -> None:
    """Register ENV_ID with gymnasium (once)."""
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point=ENTRY_POINT)


if "gymnasium" in sys.modules:
    register_env()
