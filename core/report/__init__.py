"""core.report.files."""
