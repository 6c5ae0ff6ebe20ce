"""Setting up the Ray a zoo runs on (core.zoo.ray_executor): the --ray-address (its host and
port, the plain TCP probe tried before Ray's own connect, what to check when it fails), the
connect timeouts, the handling of SIGTERM and Ray's warning when Ray is started off the main
thread, and the runtime_env the zoo's tasks run in. Needs no Ray itself."""

from __future__ import annotations

import json
import logging
import os
import socket
import sys

from core import CORE_DIR
from core.vocab.limits import ConfigError

CONNECT_TIMEOUT_S = 60.0  # --ray-timeout's default for joining a cluster
# and for starting a local instance: on a loaded machine (2 cores compiling) Ray's GCS took over 60 s
LOCAL_START_TIMEOUT_S = 300.0
PROBE_TIMEOUT_S = 5.0  # the plain TCP connection tried first
WORKER_NICENESS_VAR = "RAY_worker_niceness"  # Ray's setting (ray_constants.RAY_WORKER_NICENESS)
ADDRESS_HELP = (
    "check the address (ray://HEAD:10001 for a cluster's Ray Client server, HEAD:6379 from a machine "
    "inside the cluster), that the cluster is up (`ray status` on its head) and that this machine can "
    "reach that port"
)


class ConnectTimeout(ConfigError):
    """Ray did not answer within the connect timeout (its connect is still waiting on a thread)."""


def host_and_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a --ray-address ("ray://head:10001", "head:6379", "[::1]:6379"), or None
    for an address Ray resolves itself ("auto", "local", a bare name)."""
    target = address[len("ray://") :] if address.startswith("ray://") else address
    host, sep, port = target.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """A plain TCP connection to the address's host and port; ConfigError naming the address and
    what to check when it is refused, unreachable or unnamed (Ray would retry for a minute)."""
    target = host_and_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout).close()
    except socket.timeout:
        raise ConfigError(
            f"--ray-address {address}: no answer from {target[0]} port {target[1]} within {timeout:g} s; "
            f"{ADDRESS_HELP}."
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"--ray-address {address}: cannot connect to {target[0]} port {target[1]} "
            f"({exc.strerror or exc}); {ADDRESS_HELP}."
        ) from None


class QuietThreadWarning(logging.Filter):
    """Ray warns when ray.init runs off the main thread that it set no SIGTERM handler; the
    executor sets the same handler itself (see RayExecutor._init)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


def exit_on_sigterm(signum, frame) -> None:
    sys.exit(signum)  # what Ray's own handler does: atexit stops a local instance cleanly


def tasks_runtime_env(environ=None) -> dict:
    """The runtime_env the zoo's tasks run in: our `core` package, at the raylet's priority.

    Ray starts its workers at nice 15 (RAY_worker_niceness, added to the raylet's own), so that its
    own processes come first; a job's process inherits it, and where other work keeps every core
    busy (in the same session, or on a kernel that does not group CPU time by session) a task at
    nice 15 got 0.04 of a core here. A zoo's task measures, so it runs at the raylet's priority,
    as a local job runs at the user's (Ray's job supervisor sets the same for itself). Under
    `ray job submit`, Ray merges the job's runtime_env with this one and refuses any env var both
    set: one the job already sets is left to the job."""
    environ = os.environ if environ is None else environ
    try:  # the job's runtime_env, as ray.init reads it (ray._private.runtime_env.constants)
        job_env = json.loads(environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR") or "{}").get("runtime_env") or {}
        taken = set(job_env.get("env_vars") or {})
    except (ValueError, AttributeError, TypeError):
        taken = set()
    runtime_env = {"py_modules": [CORE_DIR], "excludes": ["__pycache__", "*.pyc"]}
    if WORKER_NICENESS_VAR not in taken:
        runtime_env["env_vars"] = {WORKER_NICENESS_VAR: "0"}
    return runtime_env
