"""core.analysis."""
