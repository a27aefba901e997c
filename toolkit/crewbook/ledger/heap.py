"""Where the reader's memory goes: a pool of its own for its Arrow buffers (freed pages
handed back at once) and the C heap trimmed every few MB read, so reading a big file peaks
at the frame plus one block, not at everything it ever allocated."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

import pyarrow as pa


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere), as Dask's workers do.

    Reading churns through block-sized buffers (the bytes, numpy's masks) that glibc
    keeps once freed, its threshold for giving memory back rising with the sizes it
    sees: without this, that garbage is a third of the peak of reading a file of tens
    of MB. It costs a few ms, once per `TRIM_EVERY` bytes read."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a read of a few MB needs it

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


@functools.cache
def reader_pool() -> pa.MemoryPool:
    """Where the reader's Arrow buffers live, chosen at the first read (importing
    crewbook changes nothing in the process).

    A jemalloc pool of the reader's own, told to give freed pages back to the system at
    once, so building the frame column by column frees each Arrow column as it is
    converted (a pool that keeps freed memory makes reading peak at the Arrow table
    plus the whole frame). The decay setting is process-wide for jemalloc, so it is
    made only when jemalloc is not the process's default pool (Arrow's default here is
    mimalloc): then only the reader's buffers are affected. Otherwise (jemalloc is the
    default, or pyarrow was built without it) the system allocator is used, untouched.
    """
    try:
        pool = pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowException):  # a pyarrow built without jemalloc
        return pa.system_memory_pool()
    if pa.default_memory_pool().backend_name == pool.backend_name:
        return pa.system_memory_pool()  # not ours to retune
    pa.jemalloc_set_decay_ms(0)
    return pool

