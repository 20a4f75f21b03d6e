"""The systems of the coding table by name, in the order the tables show them."""

from __future__ import annotations

from typing import Any

from sim.coding.kernel_system import KernelSystem
from sim.coding.systems import Advisory, Naive, Original

SYSTEMS: dict[str, Any] = {s.name: s for s in (Naive(), Advisory(), Original("filehash"),
                                                 Original("symbol"), KernelSystem())}
SYSTEM_NAMES = tuple(SYSTEMS)
