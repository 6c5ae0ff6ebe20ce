"""core.run."""
