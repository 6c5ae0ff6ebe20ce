"""The report folder: writing and reading it (a model's, a script's), the artifact views, tlparse,
what a file from elsewhere may make the product do (safety: the one gate for a report's settings
and model file), the reproducer bundle. Imports the layers below it (vocab to decide)."""
