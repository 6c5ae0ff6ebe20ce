"""core.decide."""
