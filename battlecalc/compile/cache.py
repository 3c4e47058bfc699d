"""Every table compile keeps from one battle for the next, owned by one object (TABLES).

A side's tables (compile.sides.build_side) and the block tables the Python builder lays
them out from share one byte budget, the least recently used dropped first: the sides of a
process's battles (simulate's, solve_many's lanes, a planner's thousands of leaves) and of
their blocks recur, and rebuilding one costs about what its solve does.  The smaller memos a
build reads (a force's fire law, a block's casualty walks and size check, round-1 AA
outcomes, units' fire, base orders of losses) are bounded by entries (functools.lru_cache);
registered here (memo), clear() drops them with the tables.  What is an edition's rather than a
battle's (the compiled builder's unit tables, law banks and side statics) is kept across
clear() and dropped by clear(editions=True).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

# the tables' byte budget (sides and blocks together), and the most one entry may take (a
# larger side is built each time: its solve dwarfs building it)
TABLE_BYTES = 96 << 20
ENTRY_BYTES = 16 << 20


class TableCache:
    """Tables by key within one byte budget (kept), memos registered for clear() (memo), and
    the edition's stores (editions: name -> dict)."""

    def __init__(self, max_bytes: int = TABLE_BYTES, entry_bytes: int = ENTRY_BYTES):
        self.max_bytes, self.entry_bytes = max_bytes, entry_bytes
        self._tables: OrderedDict = OrderedDict()  # key -> (table, bytes)
        self._bytes = 0
        self._lock = threading.Lock()
        self._memos: list = []  # (functools.lru_cache'd functions, dicts)
        self.editions: dict[str, dict] = {}

    @property
    def nbytes(self) -> int:
        """The bytes the kept tables hold."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._tables)

    def kept(self, key: Any, build: Callable[[], Any], keep: bool = True) -> Any:
        """The table of `key`: kept (now the most recently used), or build() (its `nbytes`)
        and kept where keep and it fits (entry_bytes), the least recently used dropped to
        stay within max_bytes."""
        with self._lock:
            found = self._tables.pop(key, None)
            if found is not None:
                self._tables[key] = found
                return found[0]
        table = build()
        size = table.nbytes
        if keep and size <= self.entry_bytes:
            with self._lock:
                if key not in self._tables:
                    while self._tables and self._bytes + size > self.max_bytes:
                        self._bytes -= self._tables.popitem(last=False)[1][1]
                    self._tables[key] = (table, size)
                    self._bytes += size
        return table

    def forget(self, kind: str) -> None:
        """Drop the kept tables of one kind (the first item of their keys: "side",
        "block"), the rest kept (a benchmark's armies new to the process, their blocks
        known)."""
        with self._lock:
            for key in [k for k in self._tables if k[0] == kind]:
                self._bytes -= self._tables.pop(key)[1]

    def memo(self, maxsize: int) -> Callable:
        """A decorator: the function kept by its arguments (functools.lru_cache of maxsize
        entries), cleared with the tables."""

        def wrap(function):
            kept = functools.lru_cache(maxsize=maxsize)(function)
            self._memos.append(kept)
            return kept

        return wrap

    def store(self, store: dict) -> dict:
        """A dict cleared with the tables (store: the dict)."""
        self._memos.append(store)
        return store

    def edition(self, name: str) -> dict:
        """The edition's store `name` (kept across clear())."""
        return self.editions.setdefault(name, {})

    def clear(self, editions: bool = False) -> None:
        """Drop every kept table and memo (editions: the edition's stores too): the next
        build is as for a battle never seen."""
        with self._lock:
            self._tables.clear()
            self._bytes = 0
        for memo in self._memos:
            (memo.cache_clear if hasattr(memo, "cache_clear") else memo.clear)()
        if editions:
            for store in self.editions.values():
                store.clear()


TABLES = TableCache()
