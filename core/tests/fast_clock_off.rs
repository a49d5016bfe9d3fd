//! `SNOWMINT_FAST_CLOCK=0` switches the TSC gate off: every reading is an exact system reading. (Its own
//! test binary: the variable is read once per process, at the first reading.)

use snowmint::{Clock, FastClock, SharedGenerator, SystemClock};

#[test]
fn snowmint_fast_clock_0_reads_the_system_clock_every_time() {
    // The only test in this process, run before any reading: nothing else reads the environment.
    std::env::set_var("SNOWMINT_FAST_CLOCK", "0");
    let gen = SharedGenerator::new(snowmint::Layout::twitter(), 1, Default::default()).unwrap();
    let start = std::time::Instant::now();
    let mut n = 0u64;
    // Longer than the ~10 ms calibration would take, were the gate allowed.
    while start.elapsed() < std::time::Duration::from_millis(50) {
        let before = SystemClock.now_ns().unwrap();
        let (ns, exact) = FastClock.now_ns_within(1_000_000).unwrap();
        assert!(exact, "reading {n} came from the counter");
        assert!(ns >= before && ns <= SystemClock.now_ns().unwrap());
        gen.next_id().unwrap();
        n += 1;
    }
    assert!(!FastClock::is_gated());
    assert!(n > if cfg!(miri) { 0 } else { 100 });
}
