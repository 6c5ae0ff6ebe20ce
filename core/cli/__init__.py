"""core.cli.profile."""
