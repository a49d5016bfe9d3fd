//! This host's name (the `k8s` node source, a lease's default holder).

/// This host's name (`/proc/sys/kernel/hostname`, else `HOSTNAME`).
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
}
