//! The deterministic simulation and its planted-defects proof (`snowmint_sim`'s documentation):
//! `cargo test -p snowmint-sim --test simulation [-- OPTIONS]`.

fn main() {
    snowmint_sim::main();
}
