//! `Layout`: a preset or a custom layout, its fields and its clock unit.

use super::*;

/// A validated ID layout: bit widths, field order, tick and epoch, with its capacity and lifespan.
#[napi]
pub struct Layout {
    pub(crate) inner: snowmint::Layout,
}

#[napi]
impl Layout {
    /// A custom layout. Every field is checked by the core; errors name the field (`INVALID_LAYOUT`).
    /// `order` defaults to timestamp, node, sequence, `tickNs` to 1 ms, `nodeIdOffset` to 0 and
    /// `useSignBit` to false, as in every binding.
    #[napi(
        constructor,
        ts_args_type = "config: { timestampBits: number; nodeBits: number; sequenceBits: number; epochMs: number | bigint; order?: 'timestamp_node_sequence' | 'timestamp_sequence_node'; tickNs?: number | bigint; nodeIdOffset?: number | bigint; useSignBit?: boolean }"
    )]
    pub fn new(env: Env, config: Unknown<'_>) -> Result<Self> {
        let env = env.raw();
        let o = Opts::new(
            env,
            raw_of(&config),
            "Layout config",
            &snowmint_host::JS_LAYOUT_KEYS,
        )?;
        let w = "Layout config";
        let order = match o.get("order") {
            None => None,
            Some(order) => {
                if type_of(env, order) != sys::ValueType::napi_string {
                    return Err(type_err(env, "order must be a string"));
                }
                Some(Order::from_name(&get_string(env, order)?).js(env)?)
            }
        };
        // The defaults of every binding (snowmint_host::LayoutFields).
        let cfg = snowmint_host::LayoutFields {
            timestamp_bits: get_u32_saturating(
                env,
                o.required("timestampBits", w)?,
                "timestampBits",
            )?,
            node_bits: get_u32_saturating(env, o.required("nodeBits", w)?, "nodeBits")?,
            sequence_bits: get_u32_saturating(env, o.required("sequenceBits", w)?, "sequenceBits")?,
            epoch_ms: get_u64(env, o.required("epochMs", w)?, "epochMs")?,
            order,
            tick_ns: o
                .get("tickNs")
                .map(|v| get_u64(env, v, "tickNs"))
                .transpose()?,
            node_id_offset: o
                .get("nodeIdOffset")
                .map(|v| get_u64(env, v, "nodeIdOffset"))
                .transpose()?,
            use_sign_bit: o
                .get("useSignBit")
                .map(|v| get_bool(env, v, "useSignBit"))
                .transpose()?,
        }
        .config();
        Ok(Layout {
            inner: snowmint::Layout::new(cfg).js(env)?,
        })
    }

    /// A preset: `twitter`, `discord`, `instagram`, `sonyflake`, `hazelcast`, `js53`, `decimal`.
    #[napi(factory, ts_args_type = "name: PresetName")]
    pub fn preset(env: Env, name: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        if type_of(env, raw_of(&name)) != sys::ValueType::napi_string {
            return Err(type_err(env, "preset name must be a string"));
        }
        Ok(Layout {
            inner: snowmint::Layout::preset(&get_string(env, raw_of(&name))?).js(env)?,
        })
    }

    /// snowcast's layout for an epoch (Unix ms) and a node count (128..=8192, rounded up to a power of 2).
    #[napi(
        factory,
        ts_args_type = "epochMs: number | bigint, nodeCount: number | bigint"
    )]
    pub fn snowcast(env: Env, epoch_ms: Unknown<'_>, node_count: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        let epoch = get_u64(env, raw_of(&epoch_ms), "epochMs")?;
        let count = get_u64(env, raw_of(&node_count), "nodeCount")?;
        Ok(Layout {
            inner: snowmint::Layout::snowcast(epoch, count).js(env)?,
        })
    }

    /// Hazelcast's layout with a node-ID offset added to every node ID.
    #[napi(factory, ts_args_type = "nodeIdOffset: number | bigint")]
    pub fn hazelcast(env: Env, node_id_offset: Unknown<'_>) -> Result<Layout> {
        let env = env.raw();
        let offset = get_u64(env, raw_of(&node_id_offset), "nodeIdOffset")?;
        Ok(Layout {
            inner: snowmint::Layout::hazelcast(offset).js(env)?,
        })
    }

    /// The preset's name, or null for a custom layout.
    #[napi(getter)]
    pub fn name(&self) -> Option<&'static str> {
        self.inner.preset_name()
    }
    #[napi(getter)]
    pub fn timestamp_bits(&self) -> u32 {
        self.inner.timestamp_bits()
    }
    #[napi(getter)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[napi(getter)]
    pub fn sequence_bits(&self) -> u32 {
        self.inner.sequence_bits()
    }
    /// Total width in bits (64 for decimal IDs).
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }
    #[napi(
        getter,
        ts_return_type = "'timestamp_node_sequence' | 'timestamp_sequence_node'"
    )]
    pub fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    /// Tick length in nanoseconds.
    #[napi(getter)]
    pub fn tick_ns(&self) -> u64 {
        self.inner.tick_ns()
    }
    /// Epoch, Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    /// The node-ID offset added to every node ID.
    #[napi(getter)]
    pub fn node_id_offset(&self) -> u64 {
        self.inner.node_id_offset()
    }
    /// How many node IDs the node field holds.
    #[napi(getter)]
    pub fn node_count(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.node_count() as f64
    }
    /// IDs one node can mint per tick.
    #[napi(getter)]
    pub fn ids_per_tick(&self) -> f64 {
        // A power of two (or the decimal layout's 100 and 1): exact as a Number at every width.
        self.inner.ids_per_tick() as f64
    }
    /// Largest node ID a generator may be given.
    #[napi(getter)]
    pub fn max_node_id(&self) -> u64 {
        self.inner.max_node_id()
    }
    /// Largest tick the timestamp field holds.
    #[napi(getter)]
    pub fn max_tick(&self) -> u64 {
        self.inner.max_tick()
    }
    /// The first Unix millisecond the layout cannot represent.
    #[napi(getter)]
    pub fn lifespan_end_ms(&self) -> u64 {
        self.inner.lifespan_end_ms()
    }
    /// The lifespan end as ISO-8601 UTC text.
    #[napi(getter)]
    pub fn lifespan_end_iso(&self) -> String {
        self.inner.lifespan_end().to_buf().as_str().to_owned()
    }
    /// Unit an injected clock returns: 'ms' (Unix ms), or 'ns' (Unix ns) for sub-millisecond ticks.
    #[napi(getter, ts_return_type = "'ms' | 'ns'")]
    pub fn clock_unit(&self) -> &'static str {
        self.inner.clock_unit().name()
    }
}
