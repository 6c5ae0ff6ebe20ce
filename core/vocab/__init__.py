"""The shared vocabulary of core: events and records (what a job reports), compile configs and job
specs, the accepted range of every setting (limits), sample storage, the report schema, where a
job's files go, how source paths read, number and terminal text, a script run's job and events, a
generation workload. The lowest layer: imports nothing of core."""
