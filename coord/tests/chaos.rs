//! A real 3-member etcd cluster under chaos (coord/test.sh starts it): while 16 processes mint under
//! leases, the leader is killed (SIGKILL) and restarted, the leader is paused (SIGSTOP) past the
//! election timeout, and a follower is paused. Holders that lose their lease are replaced by new
//! processes, as a supervisor would. Afterwards every ID is unique, every process's IDs strictly
//! increase, and the run reports how long minting stalled.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::*;

#[test]
fn holder_child() {
    holder_main();
}

/// The 1-based member index of the current leader, as the members themselves report it.
fn leader(endpoints: &[&str]) -> Option<usize> {
    let mut ids = Vec::new();
    let mut leader = None;
    for ep in endpoints {
        let out = Command::new("curl")
            .args(["-fsS", "--max-time", "1", "-X", "POST", "-d", "{}"])
            .arg(format!("http://{ep}/v3/maintenance/status"))
            .output()
            .ok()?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        ids.push(v["header"]["member_id"].as_str().map(str::to_string));
        if let Some(l) = v["leader"].as_str() {
            leader = Some(l.to_string());
        }
    }
    let leader = leader?;
    ids.iter()
        .position(|id| id.as_deref() == Some(&leader))
        .map(|i| i + 1)
}

/// Waits (bounded) until the cluster has a leader again.
fn wait_for_leader(endpoints: &[&str]) -> usize {
    let t0 = Instant::now();
    loop {
        if let Some(l) = leader(endpoints) {
            return l;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no etcd leader within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Milliseconds since the Twitter epoch, from an ID.
fn ms_of(id: u64) -> u64 {
    id >> 22
}

#[test]
fn sixteen_holders_through_leader_kills_and_pauses() {
    if !servers().contains(&Kind::Etcd) {
        return;
    }
    let endpoints_var = std::env::var("SNOWMINT_TEST_ETCD_ENDPOINTS").unwrap();
    let endpoints: Vec<&str> = endpoints_var.split(',').collect();
    assert!(
        endpoints.len() >= 3,
        "the harness runs a 3-member cluster: {endpoints_var}"
    );
    let url = fresh_url(Kind::Etcd, "chaos");
    let now_ms = snowmint_coord::Time::unix_ns(&snowmint_coord::SystemTime) / 1_000_000;
    open(&url)
        .create_sequencer("chaos", &twitter_config(64), now_ms)
        .unwrap();
    let source = with_params(&url, "sequencer=chaos&ttl=5s");
    let allowed = ["NODE_IDS_EXHAUSTED", "STORE_UNAVAILABLE"];
    let mut holders: Vec<Holder> = (0..16).map(|_| start_holder(&source)).collect();
    for h in &mut holders {
        h.ready().unwrap_or_else(|e| panic!("{e:?}"));
    }

    let mut all = Vec::new();
    let (mut longest_stall, mut lost, mut kills, mut pauses) = (0u64, 0usize, 0, 0);
    let t_all = Instant::now();
    for round in 0..4 {
        // Every holder mints one ID per millisecond for 6 s while the cluster is disturbed.
        for h in &mut holders {
            h.send("run 6000");
        }
        std::thread::sleep(Duration::from_millis(500));
        let l = wait_for_leader(&endpoints);
        let others: Vec<usize> = (1..=endpoints.len()).filter(|&m| m != l).collect();
        if round % 2 == 0 {
            server(&format!("etcd_kill {l}"));
            kills += 1;
            std::thread::sleep(Duration::from_millis(1500));
            server(&format!("etcd_restart {l}"));
        } else {
            // Past the election timeout: the others elect a new leader while this one is frozen.
            server(&format!("etcd_pause {l}"));
            pauses += 1;
            std::thread::sleep(Duration::from_millis(2000));
            server(&format!("etcd_resume {l}"));
        }
        let f = others[round % others.len()];
        server(&format!("etcd_pause {f}"));
        pauses += 1;
        std::thread::sleep(Duration::from_millis(800));
        server(&format!("etcd_resume {f}"));

        let mut replaced = Vec::new();
        for (i, h) in holders.iter_mut().enumerate() {
            let a = h.answer(Duration::from_secs(40));
            for w in a.ids.windows(2) {
                assert!(w[1] > w[0], "holder {}: {} after {}", h.pid(), w[1], w[0]);
                longest_stall = longest_stall.max(ms_of(w[1]) - ms_of(w[0]));
            }
            all.extend(&a.ids);
            if let Some((code, at_ms, message)) = a.error {
                assert_eq!(code, "LEASE_LOST", "holder {}: {message}", h.pid());
                println!(
                    "round {round}: holder {} lost its lease {at_ms} ms into the run: {message}",
                    h.pid()
                );
                lost += 1;
                replaced.push(i);
            }
        }
        for i in replaced {
            let new = holder_when_free(&source, Duration::from_secs(30), &allowed);
            std::mem::replace(&mut holders[i], new).quit();
        }
        wait_for_leader(&endpoints);
    }
    for mut h in holders {
        all.extend(h.mint(100).ids);
        h.quit();
    }
    assert_unique(&all);
    assert!(
        all.len() > 16 * 4 * 1000,
        "minting went on through the chaos: {} IDs",
        all.len()
    );
    println!(
        "chaos: 4 rounds in {:.0} s (leader killed {kills}×, members paused {pauses}×): {} IDs from 16 \
         processes at a time, all unique; longest stall in one process {longest_stall} ms; leases lost \
         and replaced: {lost}",
        t_all.elapsed().as_secs_f64(),
        all.len()
    );
}
