"""Serial, process pool and Dask give the same records in the same order: the same digest.

The Dask test starts a local cluster of two worker processes (skipped, with the reason, when
dask[distributed] is not installed: ``pip install '.[dask]'``).
"""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from sim import parallel, sweep

CASES = 30


def digest(executor) -> str:
    h = hashlib.sha256()
    for rec in executor.map_chunks(sweep.chunk, sweep.tasks(100, CASES, size=7)):
        h.update(sweep.line(rec).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def serial() -> str:
    with parallel.executor("serial", 1) as ex:
        return digest(ex)


def test_pool_equals_serial(serial):
    with parallel.executor("pool", 2) as ex:
        assert digest(ex) == serial


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask[distributed] is not installed (pip install '.[dask]')")
def test_dask_local_cluster_equals_serial(serial):
    with parallel.executor("dask", 2) as ex:
        assert digest(ex) == serial


def test_the_digest_sees_one_changed_record(serial):
    with parallel.executor("serial", 1) as ex:
        records = list(ex.map_chunks(sweep.chunk, sweep.tasks(100, CASES, size=7)))
    records[3], records[4] = records[4], records[3]
    h = hashlib.sha256()
    for rec in records:
        h.update(sweep.line(rec).encode())
    assert h.hexdigest() != serial
