"""A two-node Ray cluster simulated on this machine (ray.cluster_utils.Cluster), a zoo run on
it with one node killed mid-sweep, then the same zoo with --resume.

    python -m tests.core.zoo_ray_cluster OUT MARKERS -- ZOO ARGUMENTS...

Run it only inside a fresh network namespace (tests/core/test_zoo_ray.py does:
`unshare -n sh -c 'ip link set lo up; ...'`), so that every Ray connection stays on
127.0.0.1. Waits until jobs on both worker nodes are loading their slow models at once (each
writes MARKERS/<pid>.started, sleeps, then <pid>.loaded), removes the second worker node, and
prints one JSON line: the exit codes of both runs and the killed node's id.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time


def main(argv: list[str]) -> int:
    out, markers = argv[0], argv[1]
    zoo_args = argv[argv.index("--") + 1 :]
    from ray.cluster_utils import Cluster

    from core.cli.zoo import main as zoo_main

    node_args = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args={**node_args, "num_cpus": 0})
    workers = [cluster.add_node(**node_args) for _ in range(2)]
    cluster.wait_for_nodes()
    killed = {}

    def kill_when_both_run():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            names = os.listdir(markers)
            loading = [n for n in names if n.endswith(".started") and n.replace(".started", ".loaded") not in names]
            if len(loading) >= 2:
                killed["node_id"] = workers[1].node_id
                killed["at"] = time.time()
                cluster.remove_node(workers[1], allow_graceful=False)
                return
            time.sleep(0.1)

    watcher = threading.Thread(target=kill_when_both_run, daemon=True)
    watcher.start()
    try:
        first = zoo_main([*zoo_args, "--ray-address", cluster.address, "--out", out])
        watcher.join(1)
        second = zoo_main([*zoo_args, "--ray-address", cluster.address, "--out", out, "--resume"])
    finally:
        cluster.shutdown()
    print(json.dumps({"first": first, "second": second, "killed": killed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
