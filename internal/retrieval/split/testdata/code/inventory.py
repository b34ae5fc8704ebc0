"""A small inventory of parts, with reservations that expire."""

from __future__ import annotations

import dataclasses
import time
from typing import Iterable


class OutOfStock(Exception):
    """Raised when a reservation asks for more than is on hand."""


@dataclasses.dataclass
class Part:
    sku: str
    name: str
    on_hand: int = 0

    def describe(self) -> str:
        return f"{self.sku}: {self.name} ({self.on_hand} on hand)"


class Inventory:
    """Parts by SKU, and the reservations held against them."""

    def __init__(self, parts: Iterable[Part] = ()):
        self._parts = {p.sku: p for p in parts}
        self._held: dict[str, list[tuple[int, float]]] = {}

    def add(self, part: Part) -> None:
        if part.sku in self._parts:
            self._parts[part.sku].on_hand += part.on_hand
        else:
            self._parts[part.sku] = part

    def available(self, sku: str, now: float | None = None) -> int:
        now = time.time() if now is None else now
        held = sum(n for n, until in self._held.get(sku, []) if until > now)
        return self._parts[sku].on_hand - held

    def reserve(self, sku: str, count: int, seconds: float = 900.0) -> None:
        if count > self.available(sku):
            raise OutOfStock(f"{sku}: want {count}, have {self.available(sku)}")
        self._held.setdefault(sku, []).append((count, time.time() + seconds))

    @property
    def skus(self) -> list[str]:
        return sorted(self._parts)


def load(lines: Iterable[str]) -> Inventory:
	"""Reads 'sku,name,count' lines; a tab-indented helper, as old files have."""
	inv = Inventory()
	for line in lines:
		sku, name, count = line.strip().split(",")
		inv.add(Part(sku, name, int(count)))
	return inv

def report(inv: Inventory) -> str:
    return "\n".join(inv._parts[s].describe() for s in inv.skus)


if __name__ == "__main__":
    import sys
    print(report(load(sys.stdin)))
