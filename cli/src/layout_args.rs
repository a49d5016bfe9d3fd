//! The layout a command's layout options ([`LayoutOpts`], defined in `spec.rs`) describe: a preset, its
//! parameters (snowcast's epoch and node count, hazelcast's node ID offset) and field overrides for a
//! custom layout. Every value is validated by the core (`Layout::new`, `Layout::snowcast` …).

use snowmint::{Layout, LayoutConfig, Order};

use crate::error::CliError;
pub use crate::spec::LayoutOpts;

/// A built layout and how to call it in output.
pub struct Chosen {
    pub layout: Layout,
    /// `twitter`, or `custom (twitter with changes)`.
    pub label: String,
}

impl LayoutOpts {
    /// Whether any layout option was given (a lease source then checks it against the sequencer's;
    /// without any, the sequencer's stored layout is adopted).
    pub fn given(&self) -> bool {
        self.layout.is_some()
            || self.epoch_ms.is_some()
            || self.node_count.is_some()
            || self.node_id_offset.is_some()
            || self.fields_given()
    }

    /// Whether a field option was given (widths, order, tick, sign bit, node split).
    fn fields_given(&self) -> bool {
        self.timestamp_bits.is_some()
            || self.node_bits.is_some()
            || self.sequence_bits.is_some()
            || self.order.is_some()
            || self.tick_ns.is_some()
            || self.use_sign_bit
            || self.node_split_bits.is_some()
    }

    /// `sequencer create --node-count N`: the sequencer's node count, and with the snowcast layout that
    /// layout's node-count parameter too (one option for one idea).
    pub fn take_sequencer_nodes(&mut self) -> Option<u64> {
        let n = self.node_count.take();
        if self.layout.as_deref() == Some("snowcast") {
            self.node_count = n;
        }
        n
    }

    /// Builds the layout; the core validates every field and names the one that is wrong.
    pub fn build(&self, command: &'static str) -> Result<Chosen, CliError> {
        let name = self.layout.as_deref().unwrap_or("twitter");
        let name = if name == "chronicle" { "decimal" } else { name };
        if self.node_count.is_some() && name != "snowcast" {
            return Err(CliError::usage(
                "--node-count is a parameter of the snowcast layout only (--layout snowcast)",
                command,
            ));
        }
        let base = match name {
            "snowcast" => {
                let (Some(epoch_ms), Some(node_count)) = (self.epoch_ms, self.node_count) else {
                    return Err(CliError::usage(
                        "the snowcast layout needs --epoch-ms (its epoch, Unix ms) and --node-count (128..8192)",
                        command,
                    ));
                };
                Layout::snowcast(epoch_ms, node_count)?
            }
            "hazelcast" => Layout::hazelcast(self.node_id_offset.unwrap_or(0))?,
            // The core's message: the name as given, the nearest preset, the presets.
            _ => Layout::preset(name).map_err(|e| {
                CliError::core(e)
                    .with("or give the fields of a custom layout: see 'snowmint layout --help'")
            })?,
        };
        let overrides = self.fields_given()
            || (self.epoch_ms.is_some() && name != "snowcast")
            || (self.node_id_offset.is_some() && name != "hazelcast");
        if !overrides {
            return Ok(Chosen {
                layout: base,
                label: name.to_string(),
            });
        }
        if name == "decimal" {
            return Err(CliError::usage(
                "the decimal layout has no bit fields to change; drop the field options or pick another --layout",
                command,
            ));
        }
        let mut cfg: LayoutConfig = *base.config();
        if let Some(v) = self.timestamp_bits {
            cfg.timestamp_bits = v;
        }
        if let Some(v) = self.node_bits {
            cfg.node_bits = v;
            // A preset's datacenter/worker split no longer describes a resized node field.
            cfg.node_split_bits = 0;
        }
        if let Some(v) = self.sequence_bits {
            cfg.sequence_bits = v;
        }
        if let Some(v) = self.node_split_bits {
            cfg.node_split_bits = v;
        }
        if let Some(order) = &self.order {
            cfg.order = Order::from_name(order)
                .map_err(|e| CliError::core(e).with("short forms: ts|node|seq, ts|seq|node"))?;
        }
        if let Some(v) = self.tick_ns {
            cfg.tick_ns = v;
        }
        if let Some(v) = self.epoch_ms {
            cfg.epoch_ms = v;
        }
        if let Some(v) = self.node_id_offset {
            cfg.node_id_offset = v;
        }
        if self.use_sign_bit {
            cfg.use_sign_bit = true;
        }
        let layout = Layout::new(cfg)?;
        Ok(Chosen {
            layout,
            label: format!("custom ({name} with changes)"),
        })
    }
}
