"""The verdict as a reinforcement-learning reward: typed tiers (tiers.py), one scorer (score.py) and
the interfaces training frameworks call (a Gymnasium environment, verl's reward function, an HTTP
reward service), over a dataset of tasks. docs/reward.md is the reader's guide."""
