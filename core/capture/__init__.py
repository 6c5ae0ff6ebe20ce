"""What torch reports while it compiles: graph breaks and skipped frames (live, from
torch's own log records), recompiles, compilation metrics, the compiled graphs and torch's
compile log. Imports core.vocab and core.analysis only."""
