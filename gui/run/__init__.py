"""Runs seen from the app: the session that folds a run's events, the run worker on its thread,
the torch-info loader, zoo runs and script runs. Imports the gui layers below it and core."""
