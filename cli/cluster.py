# SPDX-License-Identifier: GPL-3.0-or-later
"""``convert DIR --scheduler ADDRESS``: a folder's jobs on Dask distributed.

The same jobs as ``--jobs N`` (:func:`.batch.run_job`, one model each, the
largest first), run by the workers of a Dask scheduler instead of local
worker processes, small files in batches (:func:`batches`); the outcomes
come back to this process, which writes the table and the report as for
``--jobs``. ADDRESS is

* ``local:N``: a cluster of N worker processes on this machine, started for
  the run and stopped after it (one thread each: a conversion holds the GIL);
* the address of a running scheduler (``tcp://host:8786``, ``tls://...``), or
  the path of its scheduler file (``dask scheduler --scheduler-file F.json``,
  as Slurm and MPI setups share it), however its workers were started:
  by hand, dask-jobqueue, dask-kubernetes. The scheduler and every worker
  need this package importable (the same version; the scheduler reads the
  tasks), and the workers the input and output folders at the same paths.

Dask is an optional dependency (``requirements-cluster.txt``), imported only
here and only for this flag; without it the flag is one line naming the
install.
"""
from __future__ import annotations

import importlib.util
import logging
import multiprocessing
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

INSTALL = "pip install -r requirements-cluster.txt (dask and distributed)"
_LOCAL = re.compile(r"^local:(\d+)$")
#: the largest number of workers ``local:N`` starts
MAX_LOCAL = 256


class SchedulerError(Exception):
    """One line: why the work cannot go to the scheduler."""


def local_workers(address: str) -> int | None:
    """N of ``local:N`` (None: another address). SchedulerError for a
    ``local...`` that is not ``local:N`` with 1 <= N <= :data:`MAX_LOCAL`."""
    m = _LOCAL.match(address)
    if m and 1 <= int(m.group(1)) <= MAX_LOCAL:
        return int(m.group(1))
    if address.startswith("local"):
        raise SchedulerError(f"--scheduler {address}: local:N starts N worker processes here "
                             f"(1 <= N <= {MAX_LOCAL})")
    return None


def check(address: str) -> None:
    """The address's form and Dask's presence, before any work starts
    (SchedulerError otherwise)."""
    local_workers(address)
    if importlib.util.find_spec("distributed") is None:
        raise SchedulerError(f"--scheduler needs Dask distributed, which is not installed: {INSTALL}")


def _client(address: str, stack: ExitStack):
    import dask
    from distributed import Client, LocalCluster

    n = local_workers(address)
    try:
        if n is not None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                # workers forked from one server that has imported Dask: they start in a fraction of the
                # seconds a fresh interpreter each takes (spawn, Dask's default), and stop as fast
                stack.enter_context(dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}))
            # Ctrl-C reaches the workers too (one process group): it is for convert, which stops them
            stack.enter_context(dask.config.set({"distributed.worker.preload": [__name__]}))
            cluster = stack.enter_context(LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                       dashboard_address=None, silence_logs=logging.ERROR))
            return stack.enter_context(Client(cluster))
        if address.endswith(".json") and Path(address).is_file():
            return stack.enter_context(Client(scheduler_file=address))
        return stack.enter_context(Client(address))
    except (OSError, TimeoutError, ValueError) as err:
        raise SchedulerError(f"--scheduler {address}: cannot reach the scheduler ({type(err).__name__}: "
                             f"{' '.join(str(err).split())})") from None


def dask_setup(worker) -> None:
    """Run by each worker of ``local:N`` as it starts (Dask's preload):
    Ctrl-C is left to ``convert``, which then stops the cluster itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _check_workers(client, address: str, package: str) -> str:
    """SchedulerError when the scheduler (it unpickles the tasks) or a
    connected worker cannot import ``package``; a note when there is no
    worker yet (the jobs then wait for them)."""
    if client.run_on_scheduler(importlib.util.find_spec, package) is None:
        raise SchedulerError(f"--scheduler {address}: the scheduler cannot import {package} (it reads the tasks): "
                             f"install it where the scheduler runs")
    found = client.run(importlib.util.find_spec, package)
    lacking = sorted(w for w, spec in found.items() if spec is None)
    if lacking:
        raise SchedulerError(f"--scheduler {address}: {len(lacking)} of {len(found)} worker(s) cannot import "
                             f"{package} ({', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}): "
                             f"install it where they run")
    if not found:
        return f"--scheduler {address}: no worker yet; the jobs wait for workers to join (Ctrl-C stops)"
    return ""


#: the most jobs one Dask task converts (a task costs the scheduler milliseconds: small files go in batches)
MAX_BATCH = 32
#: batches each worker gets at least, for the load to even out at the end
BATCHES_PER_WORKER = 16


def batches(sizes: list[int], workers: int) -> list[list[int]]:
    """The jobs (indices into ``sizes``, their input bytes, largest first)
    grouped into tasks: consecutive jobs until a batch holds its share of
    the bytes (all of them over ``workers`` * :data:`BATCHES_PER_WORKER`)
    or :data:`MAX_BATCH` jobs. A large file is a task of its own; the many
    small ones of an archive share one, so that the scheduler's cost per
    task is paid once per batch."""
    share = sum(sizes) / (max(1, workers) * BATCHES_PER_WORKER)
    out: list[list[int]] = []
    held = 0
    for k, size in enumerate(sizes):
        if not out or len(out[-1]) >= MAX_BATCH or held >= share:
            out.append([])
            held = 0
        out[-1].append(k)
        held += size
    return out


def run_batch(run: Callable, jobs: list) -> list:
    """``run`` over a batch of jobs, in a worker."""
    return [run(job) for job in jobs]


def completed(jobs: list, sizes: list[int], run: Callable, address: str, *, say: Callable[[str], None] = print
              ) -> Iterator[tuple[int, object]]:
    """``(k, run(jobs[k]))`` for each job as its batch (:func:`batches`)
    finishes on the scheduler's workers, or ``(k, the exception)`` when its
    worker failed. ``sizes`` are the jobs' input bytes (the caller gives
    them largest first, the order they are started in). Raises
    SchedulerError when the scheduler cannot be reached or its workers
    cannot import this package."""
    from distributed import as_completed

    with ExitStack() as stack:
        client = _client(address, stack)
        note = _check_workers(client, address, run.__module__.split(".")[0])
        if note:
            say(note)
        groups = batches(sizes, len(client.scheduler_info().get("workers", {})))
        futures = client.map(run_batch, [run] * len(groups), [[jobs[k] for k in g] for g in groups], pure=False)
        index = {f.key: g for f, g in zip(futures, groups)}
        try:
            for fut in as_completed(futures):
                group = index[fut.key]
                try:
                    got = fut.result()
                except Exception as err:         # the worker died (killed, out of memory): KilledWorker
                    got = [err] * len(group)
                fut.release()
                yield from zip(group, got)
        finally:
            client.cancel([f for f in futures if not f.done()])
