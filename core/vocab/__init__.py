"""core.vocab."""
