"""`zoo --ray-address` against addresses where no Ray answers, timed from outside.

    python -m tests.core.zoo_ray_blackhole MODE OUT MODEL

MODE: `silent` (a port on 127.0.0.1 that accepts connections and never answers, with
--ray-timeout 3), `refused` (a port on 127.0.0.1 where nothing listens) or `interrupt` (the
silent port with the default timeout, SIGINT sent once the zoo has been joining for 2 s).
Runs `main.py zoo MODEL ... --out OUT` as a child process and prints one JSON line: its exit
code, its stderr, the seconds it ran, and for `interrupt` the seconds from SIGINT to the
zoo saying it was interrupted and to its exit.

Run it only inside a fresh network namespace (tests/core/zoo/test_zoo_ray.py does), so that
every connection stays on this namespace's 127.0.0.1.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time

from core import PROJECT_ROOT
from tests.core.helpers import default_sigint

QUICK = ["--backend", "eager", "--iters", "5", "--warmup", "1", "--op-profile", "0", "--processes", "1"]
JOINING = "joining the Ray cluster at"


def silent_port() -> tuple[socket.socket, int]:
    """A listening socket that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    accepted = []

    def accept() -> None:
        while True:
            accepted.append(server.accept()[0])  # kept open, never answered

    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def main(argv: list[str]) -> int:
    mode, out, model = argv
    server = None
    if mode == "refused":
        port = closed_port()
    else:
        server, port = silent_port()
    command = [sys.executable, "main.py", "zoo", model, *QUICK, "--ray-address", f"127.0.0.1:{port}", "--out", out]
    if mode == "silent":
        command += ["--ray-timeout", "3"]
    started = time.monotonic()
    # Ctrl+C as in a terminal: a test run started in the background of a non-interactive shell
    # passes SIGINT on ignored, and Python keeps it so (the zoo then joined for the whole 60 s)
    proc = subprocess.Popen(
        command,
        cwd=PROJECT_ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=default_sigint,
    )
    lines: list[str] = []
    joining = threading.Event()
    said: list[float] = []  # when the interruption was said

    def read() -> None:
        for line in proc.stderr:
            lines.append(line)
            if JOINING in line:
                joining.set()
            if "interrupted" in line:
                said.append(time.monotonic())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    to_exit = to_say = None
    if mode == "interrupt":
        if joining.wait(120):
            time.sleep(2)  # well inside Ray's connect by now
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
            to_exit = time.monotonic() - sent
            reader.join(10)
            to_say = said[0] - sent if said else None
    code = proc.wait(300)
    seconds = time.monotonic() - started
    reader.join(10)
    if server is not None:
        server.close()
    print(
        json.dumps({"code": code, "seconds": seconds, "to_say": to_say, "to_exit": to_exit, "stderr": "".join(lines)}),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
