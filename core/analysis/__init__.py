"""What the figures mean: statistics and the bootstrap, the measurement-quality grade, a job's
folded result and its summary row, the time breakdown, sweeps, dynamic dimensions, figures that
disagree, a script's functions against its eager run, a generation's time to first token and
decode. Imports core.vocab only."""
