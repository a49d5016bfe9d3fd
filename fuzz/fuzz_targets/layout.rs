//! Layout configurations: any field values are accepted or refused with an error, never a panic; an
//! accepted layout decodes every ID it can hold into fields that compose back into the same ID, and
//! answers instants and ticks without overflowing.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use snowmint::{Layout, LayoutConfig, Order};

#[derive(Arbitrary, Debug)]
struct Input {
    timestamp_bits: u32,
    node_bits: u32,
    sequence_bits: u32,
    node_first: bool,
    tick_ns: u64,
    epoch_ms: u64,
    node_id_offset: u64,
    use_sign_bit: bool,
    node_split_bits: u32,
    id: u64,
    instant_ns: u64,
    ticks: u64,
    node: u64,
    sequence: u64,
}

fuzz_target!(|i: Input| {
    let cfg = LayoutConfig {
        timestamp_bits: i.timestamp_bits % 70,
        node_bits: i.node_bits % 70,
        sequence_bits: i.sequence_bits % 70,
        order: if i.node_first {
            Order::TimestampNodeSequence
        } else {
            Order::TimestampSequenceNode
        },
        tick_ns: i.tick_ns,
        epoch_ms: i.epoch_ms,
        node_id_offset: i.node_id_offset,
        use_sign_bit: i.use_sign_bit,
        node_split_bits: i.node_split_bits % 70,
    };
    let Ok(layout) = Layout::new(cfg) else { return };
    if let Ok(d) = layout.decode(i.id) {
        let again = layout
            .compose(d.timestamp_ticks, d.node, d.sequence)
            .expect("the fields of a decoded ID compose");
        assert_eq!(again, i.id, "{cfg:?}");
        let _ = d.unix_ns();
        let _ = d.iso();
    }
    let _ = layout.compose(i.ticks, i.node, i.sequence);
    if let Ok(min) = layout.min_id_at_ns(i.instant_ns) {
        // The smallest ID of that instant decodes to the instant's tick.
        let tick = layout.tick_at_ns(i.instant_ns).expect("the tick of an instant with an ID");
        assert_eq!(layout.decode(min).expect("decodes").timestamp_ticks, tick);
    }
    let _ = layout.node_field(i.node);
});
