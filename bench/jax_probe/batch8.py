"""JAX probe programs, batch 8 (2026-12-06): batch7's layers at sizes where bytes, not
collective latency, decide (batch7.LARGE: per-device arrays of hundreds of KiB to MiBs). At
batch7's sizes every collective costs mostly its latency, so plans that move more bytes in
fewer collectives win there; these show whether the bytes-lean plan wins when bytes matter."""
import batch7

NAMES = [name + "_large" for name in batch7.LARGE]


def define(c):
    batch7.define(c, sizes=batch7.LARGE, suffix="_large")
