"""Type stubs for snowmint: unique, time-ordered 64-bit IDs (Snowflake family) from one Rust core."""

import array
import builtins
import datetime
import os
import types
from typing import Callable, Final, Iterable, Literal, Optional, TypedDict, Union, final

__all__ = [
    "AsyncClient",
    "Client",
    "ENCODINGS",
    "ERROR_CODES",
    "PRESET_NAMES",
    "ClockBeforeEpochError",
    "ClockMovedBackwardsError",
    "DecimalGenerator",
    "Decoded",
    "ForkedError",
    "Generator",
    "InvalidArgumentError",
    "InvalidClockError",
    "InvalidIdError",
    "InvalidLayoutError",
    "Layout",
    "LayoutExhaustedError",
    "Lease",
    "LeaseLostError",
    "NodeIdOutOfRangeError",
    "NodeIdsExhaustedError",
    "Opaque",
    "ParseError",
    "RangeExhaustedError",
    "ServiceUnavailableError",
    "RangeSequence",
    "Sequencer",
    "SequencerConflictError",
    "SequencerDestroyedError",
    "SequencerNotFoundError",
    "SnowmintError",
    "StateFileMismatchError",
    "StoreNotFoundError",
    "StoreUnavailableError",
    "TooFarAheadError",
    "compose",
    "decode",
    "encode",
    "min_id_at",
    "parse",
    "to_string",
]

PresetName = Literal["twitter", "discord", "instagram", "sonyflake", "hazelcast", "js53", "decimal", "chronicle"]
OrderName = Literal["timestamp_node_sequence", "timestamp_sequence_node", "ts|node|seq", "ts|seq|node"]
PolicyName = Literal["wait", "fail", "strict"]
#: The state of a generator's node ID (a fixed node ID is always ``"attached"``).
GeneratorState = Literal["attached", "detached", "destroyed"]
EncodingName = Literal["dec", "decimal", "hex", "base32", "base58"]
#: A layout argument: a preset name or a :class:`Layout` (a misspelt name fails type-checking).
LayoutLike = Union[PresetName, "Layout"]
#: An injected clock: returns Unix milliseconds (whole), or nanoseconds when ``layout.clock_unit == "ns"``.
ClockFn = Callable[[], Union[int, float]]

#: The package version (the crate's, as in the wheel's metadata).
__version__: Final[str]
PRESET_NAMES: Final[list[str]]
ENCODINGS: Final[list[str]]
ERROR_CODES: Final[list[str]]

class SnowmintError(ValueError):
    """Base class of every snowmint error. ``code`` is the stable, language-neutral error code."""

    code: str
    #: The input to blame (``count``, ``token``, ``body``, ``path``, ``method``) when an ID service's
    #: error names one (:class:`Client`); None otherwise.
    field: Optional[str]

class InvalidLayoutError(SnowmintError):
    """``INVALID_LAYOUT``: a layout field is out of range; the message names the field."""

class NodeIdOutOfRangeError(SnowmintError):
    """``NODE_ID_OUT_OF_RANGE``: the node ID does not fit the layout's node field."""

class ClockMovedBackwardsError(SnowmintError):
    """``CLOCK_MOVED_BACKWARDS``: the clock stepped back under the ``strict`` policy."""

class ClockBeforeEpochError(SnowmintError):
    """``CLOCK_BEFORE_EPOCH``: the clock (or an instant) is before the layout's epoch."""

class TooFarAheadError(SnowmintError):
    """``TOO_FAR_AHEAD``: logical time would run more than ``max_ahead_ms`` ahead of the clock
    (``fail`` policy, or a clock that does not move while the generator waits)."""

    retry_after_ms: int
    """Milliseconds until the same request would succeed (rounded up)."""

class LayoutExhaustedError(SnowmintError):
    """``LAYOUT_EXHAUSTED``: the layout's timestamp field has run out (past its lifespan)."""

class ParseError(SnowmintError):
    """``PARSE``: a malformed ID string."""

    position: int
    """0-based character position of the problem."""

class LeaseLostError(SnowmintError):
    """``LEASE_LOST``: the node-ID lease was lost; the generator no longer mints."""

class InvalidClockError(SnowmintError):
    """``INVALID_CLOCK``: a clock reading is not a finite, non-negative whole number in range."""

class InvalidIdError(SnowmintError):
    """``INVALID_ID``: an ID does not fit the layout, or is not a 64-bit unsigned integer."""

class InvalidArgumentError(SnowmintError):
    """``INVALID_ARGUMENT``: an argument is out of range (a batch too large, an unknown policy …)."""

class ForkedError(SnowmintError):
    """``FORKED``: a generator created before ``os.fork()`` was used in the child process.
    Create a new generator with its own node ID in the child."""

class NodeIdsExhaustedError(SnowmintError):
    """``NODE_IDS_EXHAUSTED``: every node ID of the sequencer is held by another live holder."""

class SequencerConflictError(SnowmintError):
    """``SEQUENCER_CONFLICT``: a sequencer of this name exists with another configuration."""

class SequencerDestroyedError(SnowmintError):
    """``SEQUENCER_DESTROYED``: the sequencer was destroyed; its handles never mint again."""

class SequencerNotFoundError(SnowmintError):
    """``SEQUENCER_NOT_FOUND``: no sequencer of this name exists in the store (only ``default`` is created
    implicitly); the message names the sequencers that exist and the nearest name."""

class StoreNotFoundError(SnowmintError):
    """``STORE_NOT_FOUND``: the store does not exist (an embedded store's directory is missing: a mistyped
    path, or a store deleted); opening never creates a store, ``Sequencer.create`` does."""

class StoreUnavailableError(SnowmintError):
    """``STORE_UNAVAILABLE``: the coordination store cannot be reached, refused the request or holds
    unreadable data."""

class RangeExhaustedError(SnowmintError):
    """``RANGE_EXHAUSTED``: the range sequence has handed out every value of its width."""

class ServiceUnavailableError(SnowmintError):
    """``SERVICE_UNAVAILABLE``: the ID service cannot be reached, did not answer within the client's
    bound, or answered with something that is not its protocol."""

class StateFileMismatchError(SnowmintError):
    """``STATE_FILE_MISMATCH``: the state file belongs to another layout or node ID, is not a state
    file (truncated, foreign, damaged), was unlinked or replaced while in use, or cannot be opened."""

@final
class Layout:
    """An ID layout: field widths, field order, tick length and epoch.

    ``Layout(timestamp_bits=41, node_bits=10, sequence_bits=12, epoch_ms=1288834974657)`` builds a
    custom one (keyword arguments only); invalid ones raise :class:`InvalidLayoutError` naming the field.
    """

    def __new__(
        cls,
        *,
        timestamp_bits: int,
        node_bits: int,
        sequence_bits: int,
        order: OrderName = "timestamp_node_sequence",
        tick_ns: int = 1_000_000,
        epoch_ms: int,
        node_id_offset: int = 0,
        use_sign_bit: bool = False,
    ) -> Layout: ...
    @staticmethod
    def preset(name: PresetName) -> Layout:
        """A preset: twitter, discord, instagram, sonyflake, hazelcast, js53, decimal (``"chronicle"`` is
        accepted as another name of ``"decimal"``, whose ``name`` is ``"decimal"``)."""
    @staticmethod
    def snowcast(epoch_ms: int, node_count: int) -> Layout:
        """snowcast's layout: ``node_count`` in 128..8192 (rounded up to a power of two)."""
    @staticmethod
    def hazelcast(node_id_offset: int = 0) -> Layout:
        """Hazelcast's Flake ID layout with ``node_id_offset`` added to every node ID."""
    @staticmethod
    def decimal() -> Layout:
        """Chronicle-style decimal IDs: Unix nanoseconds (100 ns steps) ending in a host ID 0..99."""
    @property
    def name(self) -> str:
        """The preset's name, or ``"custom"``."""
    @property
    def family(self) -> Literal["binary", "decimal"]: ...
    @property
    def timestamp_bits(self) -> int: ...
    @property
    def node_bits(self) -> int: ...
    @property
    def sequence_bits(self) -> int: ...
    @property
    def total_bits(self) -> int: ...
    @property
    def order(self) -> str:
        """``"timestamp_node_sequence"`` or ``"timestamp_sequence_node"``."""
    @property
    def tick_ns(self) -> int: ...
    @property
    def epoch_ms(self) -> int:
        """Epoch, Unix milliseconds."""
    @property
    def node_id_offset(self) -> int: ...
    @property
    def use_sign_bit(self) -> bool: ...
    @property
    def node_count(self) -> int:
        """How many values the node field holds."""
    @property
    def ids_per_tick(self) -> int:
        """IDs one node can mint per tick."""
    @property
    def max_node_id(self) -> int:
        """The largest node ID a generator accepts (after any offset)."""
    @property
    def max_tick(self) -> int: ...
    @property
    def lifespan_end_ms(self) -> int:
        """The first Unix millisecond the layout cannot represent."""
    @property
    def lifespan_end(self) -> datetime.datetime:
        """The lifespan end as an aware UTC datetime (``OverflowError`` past year 9999)."""
    @property
    def lifespan_end_iso(self) -> str: ...
    @property
    def clock_unit(self) -> Literal["ms", "ns"]:
        """The unit an injected clock returns for this layout."""
    def reading_to_ns(self, reading: Union[int, float]) -> int:
        """Validates an injected clock's reading and converts it to Unix nanoseconds
        (:class:`InvalidClockError` for NaN, infinities, negatives, fractions, floats above 2**53 - 1)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Decoded:
    """An ID taken apart under a layout."""

    @property
    def id(self) -> int: ...
    @property
    def timestamp_ticks(self) -> int:
        """Ticks since the layout's epoch."""
    @property
    def timestamp_ms(self) -> int:
        """Unix time of the tick's start, whole milliseconds."""
    @property
    def sub_ms_ns(self) -> int:
        """Nanoseconds past ``timestamp_ms`` (sub-millisecond layouts)."""
    @property
    def unix_ns(self) -> Optional[int]:
        """Unix nanoseconds of the tick's start (``None`` after year 2554)."""
    @property
    def node_id(self) -> int:
        """The node field as stored (node ID plus any ``node_id_offset``)."""
    @property
    def sequence(self) -> int: ...
    @property
    def iso(self) -> str:
        """ISO-8601 UTC, e.g. ``2020-01-01T00:00:00.000Z`` (nanosecond digits for sub-ms layouts)."""
    @property
    def datetime(self) -> datetime.datetime:
        """An aware UTC datetime (microsecond precision; ``OverflowError`` past year 9999)."""
    @property
    def layout(self) -> Layout:
        """The layout the ID was decoded under."""
    def to_dict(self) -> DecodedDict:
        """The fields as plain values (``json.dumps`` takes the dict)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

class DecodedDict(TypedDict):
    """:meth:`Decoded.to_dict`: the same fields as JavaScript's ``JSON.stringify(decode(id))``, in Python names."""

    id: int
    timestamp_ticks: int
    timestamp_ms: int
    sub_ms_ns: int
    unix_ns: Optional[int]
    node_id: int
    sequence: int
    iso: str

@final
class Generator:
    """A thread-safe, lock-free generator (one compare-and-swap per request).

    ``clock=None`` reads the system clock in Rust; otherwise ``clock`` is a callable returning Unix
    milliseconds (whole), or nanoseconds for layouts with ``clock_unit == "ns"``. Under the ``wait``
    policy the generator sleeps (GIL released) while logical time is more than ``max_ahead_ms`` ahead
    of the clock; ``fail`` raises :class:`TooFarAheadError`; ``strict`` raises
    :class:`ClockMovedBackwardsError` on any backwards step. ``random_start=True`` (or a
    ``random_seed``) starts each tick's sequence at a pseudo-random value.

    ``state_file`` (a path, e.g. ``"/dev/shm/orders.snowmint"``) keeps the state word in a memory-mapped
    file shared by every process that opens it with the same layout and node ID (else
    :class:`StateFileMismatchError`), created if missing: gunicorn workers share one node ID with no
    duplicates, a restarted process continues after the last ID, a forked child is safe.

    ``node_id`` may be a lease source (``"file:///DIR"``, ``"etcd://…"``, ``"postgres://…"``): with every
    node ID held, ``wait_for_node_ms`` (or ``?wait=30s`` in the source) waits up to that long for one to
    come free. Used in a process forked after it was opened, it opens a lease of its own there on first
    use; a process that never minted gives its node ID back before it forks. A lease source with
    ``state_file`` is one lease per host: the first process on the file claims the node ID, every
    process on it mints under it, the last one to close releases it (a lost lease raises
    :class:`LeaseLostError` in every process).
    """

    def __new__(
        cls,
        node_id: Union[int, str],
        layout: LayoutLike = "twitter",
        *,
        clock: Optional[ClockFn] = None,
        policy: PolicyName = "wait",
        max_ahead_ms: int = 15000,
        random_start: bool = False,
        random_seed: Optional[int] = None,
        state_file: Optional[Union[str, os.PathLike[str]]] = None,
        wait_for_node_ms: Optional[int] = None,
    ) -> Generator: ...
    def next_id(self) -> int:
        """Mints one ID."""
    def next_ids(self, n: int) -> list[int]:
        """Mints ``n`` consecutive IDs from one clock reading (one atomic step)."""
    def next_ids_array(self, n: int) -> array.array[int]:
        """Mints ``n`` consecutive IDs into a new ``array.array('Q')``, written in place by Rust."""
    def next_ids_into(self, out: array.array[int]) -> None:
        """Fills an existing ``array.array('Q')`` with consecutive IDs from one clock reading, in place
        (reuse one array for batch after batch; ``TypeError`` for other typecodes)."""
    @property
    def layout(self) -> Layout: ...
    @property
    def node_id(self) -> int: ...
    @property
    def policy(self) -> PolicyName: ...
    @property
    def max_ahead_ms(self) -> int: ...
    @property
    def random_start(self) -> bool: ...
    @property
    def clock(self) -> Optional[ClockFn]: ...
    @property
    def state_file(self) -> Optional[str]:
        """The state file's path, or None (the state is in this process)."""
    def stats(self) -> _GeneratorStats:
        """What this generator has done since it was built (a new dict each call, ints only). With a
        state file: this process's generator; with a lease source: summed over every lease it held."""
    def flush(self) -> None:
        """Makes the state file durable (msync); :class:`InvalidArgumentError` without a state file."""
    def verify_state_file(self) -> None:
        """:class:`StateFileMismatchError` if the state file was unlinked or replaced while in use."""
    @property
    def lease(self) -> Optional[Lease]:
        """The lease held, or None (a fixed node ID, or detached)."""
    @property
    def state(self) -> GeneratorState:
        """``"attached"``, ``"detached"`` or ``"destroyed"`` (a fixed node ID is always attached)."""
    def high_water_mark(self) -> int:
        """The high-water mark (the next free logical position): persist it at shutdown or
        periodically and pass it to :meth:`restore` after a restart, so no ID repeats even if the
        clock went back while the process was down. :class:`InvalidArgumentError` under a lease source."""
    def restore(self, mark: Union[int, str]) -> None:
        """Continues from a persisted high-water mark (int or decimal str); never moves backwards."""
    def detach(self) -> None:
        """Releases the lease; minting raises :class:`LeaseLostError` until :meth:`attach`."""
    def attach(self) -> None:
        """Claims a node ID again (blocking, GIL released)."""
    def close(self) -> None:
        """Releases the lease now (also done by ``with``)."""
    def __enter__(self) -> Generator: ...
    def __exit__(self, *args: object) -> bool: ...

@final
class Opaque:
    """Opaque IDs: a keyed permutation of the layout's width (63 bits for ``twitter``, 53 for ``js53``,
    64 with the sign bit) that maps each ID to a token of the same width and back.

    Tokens reveal neither time, node nor count; they are not authentication (any number of the width
    decodes to some ID). A 4-round Feistel network (SipHash-1-3 in the middle rounds, a keyed
    multiply-add-shift hash in the first and last) under ``key``, 16 secret bytes
    (:class:`InvalidArgumentError` otherwise). IDs and tokens at or above ``2 ** bits`` raise
    :class:`InvalidIdError`.
    """

    def __new__(cls, key: Union[bytes, bytearray], layout: LayoutLike = "twitter") -> Opaque: ...
    def encode(self, id: int) -> int:
        """The token of an ID."""
    def decode(self, token: int) -> int:
        """The ID of a token."""
    def encode_str(self, id: int, encoding: EncodingName = "dec") -> str:
        """The token of an ID as text (``"base58"``: 11 characters)."""
    def decode_str(self, text: str, encoding: Union[EncodingName, Literal["any"]] = "any") -> int:
        """The ID of a token given as text (:class:`ParseError` for malformed text)."""
    def encode_many(self, ids: Iterable[int]) -> list[int]:
        """The tokens of many IDs, as a list (an error leaves nothing behind)."""
    def decode_many(self, tokens: Iterable[int]) -> list[int]:
        """The IDs of many tokens, as a list."""
    @property
    def bits(self) -> int:
        """The width: IDs and tokens are the ints below ``2 ** bits``."""
    @property
    def layout(self) -> Layout: ...


@final
class Lease:
    """A node-ID lease as seen at one moment."""

    @property
    def node_id(self) -> int: ...
    @property
    def fencing_token(self) -> int: ...
    @property
    def expires_unix_ms(self) -> int: ...
    @property
    def expires_at(self) -> datetime.datetime: ...

@final
class Sequencer:
    """A named sequencer (snowcast) in a store: ``file:///DIR``, ``etcd://HOST:PORT/PREFIX`` or
    ``postgres://USER@HOST:PORT/DB``."""

    @staticmethod
    def create(
        name: str, *, store: str, layout: LayoutLike = "twitter", node_count: Optional[int] = None
    ) -> Sequencer: ...
    @staticmethod
    def open(name: str, *, store: str) -> Sequencer: ...
    @staticmethod
    def list(*, store: str) -> builtins.list[str]: ...
    def attach(self) -> Generator: ...
    def destroy(self) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def node_count(self) -> int: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def state(self) -> GeneratorState: ...

class _GeneratorStats(TypedDict):
    """:meth:`Generator.stats`: counters since the generator was built, each only growing."""

    minted: int
    """IDs handed out (single IDs and every ID of every batch)."""
    batches: int
    """Batch calls (``next_ids``, ``next_ids_array``, ``next_ids_into``) that minted at least one ID."""
    borrowed_ticks: int
    """Ticks the generator moved to ahead of the clock (a used-up tick, or a clock that stepped back)."""
    waits: int
    """Sleeps the generator took under the ``wait`` policy (logical time ``max_ahead_ms`` ahead)."""
    wait_ns: int
    """The total of those sleeps, in nanoseconds (as asked)."""
    regressions: int
    """Clock readings below the last one seen, in whole ticks (one step back counts once)."""

class _RangeStats(TypedDict):
    values: int
    process_ranges: int
    dc_ranges: int
    late: int
    wait_ns: int
    current: tuple[int, int]
    ready: Optional[tuple[int, int]]

@final
class RangeSequence:
    """Compact integer IDs (31 bits by default) from ranges leased global → datacenter → process by
    compare-and-set (SPEC §4). ``global_store`` is shared by every datacenter, ``local_store`` is the
    datacenter's own (default: the global one); each is ``file:///DIR``, ``etcd://HOST:PORT/PREFIX`` or
    ``postgres://USER@HOST:PORT/DB``. Opening blocks until the first process range is held.

    Values are unique across every process and datacenter, below ``2**bits``, and strictly increasing
    per process. With the global store down a datacenter serves from its range; with its own store
    down a process mints what it holds, then waits at most ``wait_ms`` and raises
    :class:`StoreUnavailableError`; :class:`RangeExhaustedError` once every value is out.
    """

    def __new__(
        cls,
        name: str,
        *,
        dc: str,
        global_store: str,
        local_store: Optional[str] = None,
        dc_range: int = 1000000,
        process_range: int = 1000,
        bits: int = 31,
        start: int = 1,
        threshold: int = 50,
        wait_ms: int = 2000,
    ) -> RangeSequence: ...
    def next_id(self) -> int:
        """The next value: one atomic step on the held range (waits only when no range is ready)."""
    def next_ids(self, n: int) -> builtins.list[int]:
        """``n`` values, increasing."""
    def stats(self) -> _RangeStats:
        """Values handed out, ranges taken per level, late pre-allocations and the time spent waiting."""
    @property
    def bits(self) -> int: ...

class ClientStats(TypedDict):
    """What a client has done: IDs handed out, IDs dropped because their batch expired, valid IDs
    prefetched now, HTTP requests sent and failed attempts."""

    ids: int
    expired: int
    available: int
    requests: int
    failures: int

#: A client's clock: monotonic milliseconds (only differences matter; tests inject one).
MonotonicMsFn = Callable[[], Union[int, float]]

@final
class Client:
    """A thread-safe client of the snowmint ID service (``snowmint serve``, SPEC §6a) that prefetches
    IDs: ``next_id()`` takes one from the batch in hand (a native call, no network); below half of
    ``prefetch`` left, a background thread fetches the next batch. A batch fetched at local time ``t``
    serves until ``t + min(validity_ms, the service's valid_for_ms)`` on this client's monotonic clock
    (``clock``, injectable); older IDs are dropped, never returned.

    Errors: the service's answer raises the :class:`SnowmintError` subclass of its code (``.code``,
    ``.field``, ``.retry_after_ms``); a service that cannot be reached, times out or does not speak the
    protocol raises :class:`ServiceUnavailableError` after ``retries`` retries, within
    ``max_wait_ms()`` = (retries + 1) × timeout_ms + the pauses (50, 100, 200, … ≤ 1000 ms).
    Refused options raise :class:`InvalidArgumentError` (``TypeError`` for a wrong type).
    """

    def __init__(
        self,
        url: str,
        prefetch: int = 100,
        validity_ms: int = 600000,
        timeout_ms: int = 2000,
        retries: int = 3,
        clock: Optional[MonotonicMsFn] = None,
        *,
        ca: Optional[Union[str, os.PathLike[str]]] = None,
        token: Optional[str] = None,
    ) -> None: ...
    def next_id(self) -> int:
        """The next ID (waits on the network only when no valid ID is prefetched)."""
    def next_ids(self, n: int) -> builtins.list[int]:
        """``n`` IDs, fetching the batches they need (at most 10000 per request)."""
    def try_next_id(self) -> Optional[int]:
        """The next ID if a valid one is prefetched, else None (never waits)."""
    def stats(self) -> ClientStats: ...
    def max_wait_ms(self) -> int:
        """The longest one fetch takes before it raises."""
    def close(self) -> None:
        """Drops the prefetched IDs, stops the refill thread, closes the connection (idempotent);
        later calls raise :class:`ServiceUnavailableError`."""
    @property
    def url(self) -> str: ...
    @property
    def prefetch(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Client: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None: ...

@final
class AsyncClient:
    """The asyncio form of :class:`Client` (same options, batches, validity and errors):
    ``await client.next_id()``; the I/O runs on the loop's default executor and a refill starts as a
    task below half of ``prefetch``. ``try_next_id()`` is the synchronous hot path."""

    def __init__(
        self,
        url: str,
        prefetch: int = 100,
        validity_ms: int = 600000,
        timeout_ms: int = 2000,
        retries: int = 3,
        clock: Optional[MonotonicMsFn] = None,
        *,
        ca: Optional[Union[str, os.PathLike[str]]] = None,
        token: Optional[str] = None,
    ) -> None: ...
    async def next_id(self) -> int: ...
    async def next_ids(self, n: int) -> builtins.list[int]: ...
    def try_next_id(self) -> Optional[int]: ...
    def stats(self) -> ClientStats: ...
    def max_wait_ms(self) -> int: ...
    async def aclose(self) -> None: ...
    @property
    def url(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    async def __aenter__(self) -> AsyncClient: ...
    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None: ...

def DecimalGenerator(
    host_id: int,
    *,
    clock: Optional[ClockFn] = None,
    policy: PolicyName = "wait",
    max_ahead_ms: int = 15000,
    random_start: bool = False,
    random_seed: Optional[int] = None,
) -> Generator:
    """A generator of Chronicle-style decimal IDs (``layout="decimal"``, host IDs 0..99)."""

def decode(id: Union[int, str], layout: LayoutLike = "twitter") -> Decoded:
    """Takes an ID apart: an int, or a str in any form (as :func:`parse` with ``"any"``).
    :class:`InvalidIdError` for an int that is negative, ≥ 2**64 or has bits above the layout's width;
    :class:`ParseError` for a malformed or ambiguous str."""

def compose(timestamp_ticks: int, node_id: int, sequence: int, layout: LayoutLike = "twitter") -> int:
    """Composes an ID from its fields (the node field as stored), each checked against the layout."""

def min_id_at(at: Union[datetime.datetime, int], layout: LayoutLike = "twitter") -> int:
    """The smallest ID of the layout at or after an instant: an aware datetime, or Unix milliseconds."""

def encode(id: int, encoding: EncodingName = "dec") -> str:
    """The ID as text: ``dec``, ``hex`` (16 digits), ``base32`` (13, Crockford) or ``base58`` (11)."""

def to_string(id: int, encoding: EncodingName = "dec") -> str:
    """Alias of :func:`encode`."""

def parse(text: str, encoding: Union[EncodingName, Literal["any"]] = "any") -> int:
    """Parses an ID in one encoding, or ``"any"`` (told apart by shape); :class:`ParseError` names the
    bad character's position."""
