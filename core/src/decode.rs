//! Reading IDs back: fields, times, composing IDs from fields, and the smallest ID of an instant.

use crate::error::{Error, Result};
use crate::layout::{Family, Layout, Order};
use crate::time::IsoTime;

/// An ID taken apart under a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decoded {
    /// The ID.
    pub id: u64,
    /// Ticks since the layout's epoch.
    pub timestamp_ticks: u64,
    /// Unix time of the tick's start, whole milliseconds.
    pub unix_ms: u64,
    /// Nanoseconds past `unix_ms` (non-zero only for ticks that are not whole milliseconds).
    pub sub_ms_ns: u32,
    /// The node field as stored (a node ID plus the layout's `node_id_offset`).
    pub node: u64,
    /// The sequence field (0 for decimal IDs).
    pub sequence: u64,
    pub(crate) nanos: bool,
}

impl Decoded {
    /// Unix nanoseconds of the tick's start, if before year 2554.
    pub fn unix_ns(&self) -> Option<u64> {
        self.unix_ms
            .checked_mul(1_000_000)?
            .checked_add(self.sub_ms_ns as u64)
    }

    /// The time as ISO-8601 UTC (nanosecond digits for sub-millisecond layouts).
    pub fn iso(&self) -> IsoTime {
        IsoTime::new(self.unix_ms, self.sub_ms_ns, self.nanos)
    }
}

impl Layout {
    /// Takes an ID apart. An ID with bits above the layout's width is [`Error::InvalidId`].
    ///
    /// ```
    /// let twitter = snowmint::Layout::twitter();
    /// let d = twitter.decode(1212161512043450368).unwrap();
    /// assert_eq!((d.unix_ms, d.node, d.sequence), (1577836800000, 1, 0));
    /// assert_eq!(d.iso().to_buf().as_str(), "2020-01-01T00:00:00.000Z");
    /// ```
    pub fn decode(&self, id: u64) -> Result<Decoded> {
        let (tick, node, sequence) = match self.family() {
            Family::Decimal => {
                if id / 100 > self.max_tick() {
                    return Err(Error::InvalidId { id, bits: 64 });
                }
                (id / 100, id % 100, 0)
            }
            Family::Binary => {
                let total = self.total_bits();
                if total < 64 && id >> total != 0 {
                    return Err(Error::InvalidId { id, bits: total });
                }
                let (nb, sb) = (self.node_bits(), self.sequence_bits());
                let tick = id >> (nb + sb);
                match self.order() {
                    Order::TimestampNodeSequence => {
                        (tick, (id >> sb) & self.node_max(), id & self.seq_mask())
                    }
                    Order::TimestampSequenceNode => {
                        (tick, id & self.node_max(), (id >> nb) & self.seq_mask())
                    }
                }
            }
        };
        // Fits: the lifespan was checked to fit Unix milliseconds at construction.
        let (since_epoch_ms, sub_ms_ns) =
            crate::layout::split_ms(tick as u128 * self.tick_ns() as u128);
        let unix_ms = (self.epoch_ms() as u128 + since_epoch_ms) as u64;
        Ok(Decoded {
            id,
            timestamp_ticks: tick,
            unix_ms,
            sub_ms_ns,
            node,
            sequence,
            nanos: self.shows_nanos(),
        })
    }

    /// Composes an ID from a tick, a node field value and a sequence number, each checked against its field.
    pub fn compose(&self, timestamp_ticks: u64, node: u64, sequence: u64) -> Result<u64> {
        if timestamp_ticks > self.max_tick() {
            return Err(Error::LayoutExhausted {
                lifespan_end_ms: self.lifespan_end_ms(),
            });
        }
        if node > self.node_max() {
            return Err(Error::NodeIdOutOfRange {
                node_id: node,
                offset: 0,
                max: self.node_max(),
            });
        }
        if sequence > self.seq_mask() {
            return Err(Error::InvalidArgument {
                name: "sequence",
                value: sequence,
                max: self.seq_mask(),
            });
        }
        Ok(self.pack((timestamp_ticks << self.sequence_bits()) | sequence, node))
    }

    /// The smallest ID any generator of this layout can mint at or after `unix_ns` (for range queries:
    /// "created at or after T" is `id >= min_id_at_ns(T)`).
    pub fn min_id_at_ns(&self, unix_ns: u64) -> Result<u64> {
        let tick = self.tick_at_ns(unix_ns)?;
        self.compose(tick, 0, 0)
    }

    /// [`Layout::min_id_at_ns`] for a Unix-millisecond instant.
    pub fn min_id_at_ms(&self, unix_ms: u64) -> Result<u64> {
        self.min_id_at_ns(crate::ClockUnit::Millis.to_ns(unix_ms)?)
    }

    /// The tick containing a Unix-millisecond instant.
    pub fn tick_at_ms(&self, unix_ms: u64) -> Result<u64> {
        self.tick_at_ns(crate::ClockUnit::Millis.to_ns(unix_ms)?)
    }
}
