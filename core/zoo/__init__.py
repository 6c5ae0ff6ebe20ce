"""core.zoo.results."""
