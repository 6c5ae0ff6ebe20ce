"""One job, in its child process: loading, the phases, timing (latency and throughput), sweeps,
accuracy, the op profile, training steps, the environment; and a user's script run with every
torch.compile in it timed (script_child). Imports core.vocab, core.analysis, core.models and
core.capture."""
