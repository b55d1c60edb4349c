"""`rolemem serve` run as a child process (the tests, the benchmarks, a game's own harness): a
free loopback port to give it, and the wait until it answers."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    """A loopback port nothing listens on once the probe is closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(base: str, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Return once `base` answers /ready with 200. A process that exits first, or is not up
    after `timeout` seconds (then stopped), raises RuntimeError with the end of its stderr."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base}/ready", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.kill()
            _, err = process.communicate(timeout=10)
            raise RuntimeError(
                f"rolemem serve at {base} did not start (exit code {process.returncode}): "
                + (err or b"").decode(errors="replace")[-2000:]
            )
        time.sleep(0.05)
