"""The call loop shared by legacy_client.py (SDK 1.x) and modern_client.py (SDK 2.x).

Each client connects in its own way and hands `run` a `call(name, arguments, on_progress)`
coroutine returning `(is_error, text)`. `run` starts workers on that one connection (one
session, for the legacy client): WORKERS call, in turn, `echo` with a counter that the answer
must repeat and `test_long_running_task` (5 steps of 100 ms, so that calls are in flight
whenever an instance is told to stop) whose 5 progress notifications must all arrive; ECHOERS
call `echo` alone, back to back, so that hundreds of requests a second cross the instant an
instance stops listening (the races haproxy's retries must cover). It touches READY once every
worker has had a right answer (run.sh starts the restarts then), and stops when STOP appears
(run.sh makes it a few seconds after the last restart). A call that raises, times out or
answers wrong is a failure, printed at once with the time (to read beside run.sh's restart
lines and haproxy's log). Only plain anyio here: both venvs have it.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from typing import Awaitable, Callable

import anyio

WORKERS = 4  # each alternating echo and the long task
ECHOERS = 2  # each calling echo alone, back to back: many requests cross each restart's instant
CALL_TIMEOUT = 20  # seconds: more than the servers' shutdown grace (10 s), a call's worst case
MAX_RUN = 90  # seconds: STOP never appearing is a failure, never a hang
LONG_ARGS = {"steps": 5, "delayMs": 100}

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
Call = Callable[[str, dict, Progress | None], Awaitable[tuple[bool, str]]]


def now() -> str:
    return datetime.now().strftime("%H:%M:%S.%f")[:-3]


class Tally:
    def __init__(self, label: str) -> None:
        self.label = label
        self.made = self.right = self.failed = 0

    def fail(self, what: str, detail: object) -> None:
        self.failed += 1
        print(f"{now()} {self.label}: FAIL {what}: {detail}", flush=True)


async def one(tally: Tally, what: str, call: Call, name: str, args: dict, expect: str) -> bool:
    """One call, bounded; True when it was answered `expect` (with every progress step for the long task)."""
    progress: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    tally.made += 1
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            is_error, text = await call(name, args, on_progress if name != "echo" else None)
    except Exception as e:  # noqa: BLE001 - any exception (a timeout too) is this call's failure
        tally.fail(what, f"{type(e).__name__}: {e!r}")
        return False
    want_progress = [float(s) for s in range(1, LONG_ARGS["steps"] + 1)] if name != "echo" else []
    if is_error or text != expect or progress != want_progress:
        tally.fail(what, f"is_error={is_error} text={text!r} (want {expect!r}) progress={progress} (want {want_progress})")
        return False
    tally.right += 1
    return True


async def worker(tally: Tally, n: int, call: Call, stop: str, ready: anyio.Event, long: bool) -> None:
    i = 0
    while not os.path.exists(stop):
        i += 1
        text = f"{tally.label} worker {n} call {i}"
        ok = await one(tally, f"echo #{i} of worker {n}", call, "echo", {"text": text}, text)
        if long:
            ok &= await one(tally, f"long task #{i} of worker {n}", call, "test_long_running_task", LONG_ARGS, "Counted to 5.")
        if ok:
            ready.set()


async def run(tally: Tally, call: Call, ready_file: str, stop_file: str, min_calls: int) -> None:
    readies = [anyio.Event() for _ in range(WORKERS + ECHOERS)]
    with anyio.move_on_after(MAX_RUN) as scope:
        async with anyio.create_task_group() as tg:
            for n, ready in enumerate(readies):
                tg.start_soon(worker, tally, n, call, stop_file, ready, n < WORKERS)
            for ready in readies:
                await ready.wait()
            open(ready_file, "w").close()
    if scope.cancelled_caught:
        tally.fail("the run", f"{stop_file} did not appear within {MAX_RUN}s")
    if tally.made < min_calls:
        tally.fail("the run", f"only {tally.made} calls made, fewer than {min_calls}: a worker was stuck")


def main(label: str, sdk: str, run_client: Callable[[Tally, str, str, str, int], Awaitable[None]]) -> None:
    """argv: URL READY_FILE STOP_FILE MIN_CALLS; prints `LABEL: N calls, ...`; exits 1 on any failure."""
    url, ready_file, stop_file, min_calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    print(f"{now()} {label} ({sdk}) -> {url}", flush=True)
    tally, started, ended = Tally(label), time.monotonic(), ""
    try:
        anyio.run(run_client, tally, url, ready_file, stop_file, min_calls)
    except BaseException as e:  # noqa: BLE001 - the SDK's transport failing ends every call: a failure
        tally.fail("the connection", f"{type(e).__name__}: {e!r}")
        ended = ", then the connection failed"
    print(
        f"{label}: {tally.made} calls, {tally.right} right, {tally.failed} failed"
        f" in {time.monotonic() - started:.1f}s ({WORKERS} + {ECHOERS} workers{ended})",
        flush=True,
    )
    sys.exit(1 if tally.failed else 0)
