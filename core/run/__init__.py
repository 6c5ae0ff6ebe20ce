"""Running jobs from the parent: the runner's state machine, the child process and its private log
folder, resource sampling, progress, what the installed torch offers; a user's script and a
generation profiled in child processes. Imports every layer below it (vocab to measure), never
decide, report, zoo or cli."""
