//! Node sources (SPEC §3.1). Filled in below.

/// This host's name (`/proc/sys/kernel/hostname`, else `HOSTNAME`).
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
}
