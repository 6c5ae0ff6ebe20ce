"""Many models x configs: the rows and summaries, their files, the sweep, and its executors (local
and Ray). Imports the layers below it (vocab to report)."""
