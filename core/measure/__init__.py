"""core.measure."""
