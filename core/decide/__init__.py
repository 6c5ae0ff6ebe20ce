"""Decisions from measured results: the recommendation and its code, suggestions and their advice,
compare (two reports of a model, or of a script), tune's candidates and budget, where outputs
diverge (localize). Imports the layers below it (vocab to run)."""
