"""snowmint: unique, time-ordered 64-bit IDs (Snowflake family) from one Rust core.

    >>> import snowmint
    >>> gen = snowmint.Generator(node_id=7, layout="twitter")
    >>> a, b = gen.next_id(), gen.next_id()
    >>> b > a
    True
    >>> snowmint.decode(a).node_id
    7

Every rule (layouts, sequencing, clock regression, decoding, string forms) lives in the Rust core;
this package converts types and maps errors, so Python emits the same IDs as Rust, Node, WASM and C
for the same layout, node ID and clock readings.

Errors: every error is a :class:`SnowmintError` (a ``ValueError``) with a stable ``.code`` such as
``"NODE_ID_OUT_OF_RANGE"``; each code has its own subclass. Wrong argument types raise ``TypeError``.

Forking (gunicorn, multiprocessing with the fork start method): a generator created in a parent
process raises :class:`ForkedError` when used in a forked child, instead of minting IDs the parent
may also mint. The check costs one relaxed atomic load per call: ``os.register_at_fork`` (and a
``pthread_atfork`` handler, for forks that bypass ``os.fork``) bumps a process-wide fork counter in the
child, and each generator compares it with the count it was created under. In the child, create a new ``Generator`` with a node ID of its own (for example the worker
number added to a base node ID), or let it take one from a node source:
``Generator("file:///var/lib/myapp/ids")`` or ``Generator("etcd://10.0.0.5:2379/myapp")`` claims a free
node ID under a lease (blocking, GIL released) that a background thread renews; ``close()`` (or ``with``)
releases it. A lease held by a parent stops minting in a forked child (the child opens its own).

One node ID for many processes: ``Generator(node_id=3, state_file="/dev/shm/orders.snowmint")`` keeps
the generator's state word in a memory-mapped file shared by every process that opens it (the same
layout and node ID, else :class:`StateFileMismatchError`), so gunicorn workers mint under one node ID
with no duplicates; a generator on a state file is safe in a forked child and never raises
:class:`ForkedError`.
"""

from . import _snowmint as _native
from ._snowmint import (
    ENCODINGS,
    ERROR_CODES,
    PRESET_NAMES,
    Decoded,
    Generator,
    Layout,
    Lease,
    Opaque,
    RangeSequence,
    Sequencer,
    SnowmintError,
    __version__,
    compose,
    decode,
    encode,
    min_id_at,
    parse,
)

# The exception classes, one per stable error code, come from the one table in src/lib.rs
# (`exceptions!`): the native module lists their names in `_EXCEPTIONS`.
globals().update({_name: getattr(_native, _name) for _name in _native._EXCEPTIONS})

#: Alias of :func:`encode` (the name other runtimes use).
to_string = encode


def DecimalGenerator(host_id, **options):  # noqa: N802 (a factory that reads like a class)
    """A generator of Chronicle-style decimal IDs: ``Generator(host_id, layout="decimal", **options)``.

    Host IDs are 0..99; an injected clock returns Unix nanoseconds.
    """
    return Generator(host_id, "decimal", **options)


__all__ = [
    "ENCODINGS",
    "ERROR_CODES",
    "PRESET_NAMES",
    "DecimalGenerator",
    "Decoded",
    "Generator",
    "Layout",
    "Lease",
    "Opaque",
    "RangeSequence",
    "Sequencer",
    "SnowmintError",
    "compose",
    "decode",
    "encode",
    "min_id_at",
    "parse",
    "to_string",
    *_native._EXCEPTIONS,
]
