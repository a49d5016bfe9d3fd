//! The embedded store's directory in the lease world's `file` shape (`--world "embedded leases"`): where it
//! lives, how it is deleted, copied and cleared, and the host registry's files of its node IDs.

use crate::worlds::leases::NAME;

/// The embedded world's store directory: one path for every seed (the host registry keeps a file per
/// path ever claimed), on tmpfs where there is one (the store syncs every write).
pub(crate) fn embedded_dir() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("snowmint-sim-{}", std::process::id()))
        .join("embedded")
}

/// Removes the embedded world's directory and the ones it replaced, and this world's files of the
/// host registry (its paths are this process's own).
pub(crate) fn clear_embedded(dir: &std::path::Path) {
    if let Some(parent) = dir.parent() {
        let _ = std::fs::remove_dir_all(parent);
    }
    for f in registry_files(dir, 16) {
        let _ = std::fs::remove_file(f);
    }
}

/// `rm -rf` of the store's directory: through a symbolic link, the directory it points to (the link is
/// left, dangling, then removed so that the store is made again as a plain directory).
pub(crate) fn remove_store_dir(dir: &std::path::Path) {
    if let Ok(target) = std::fs::read_link(dir) {
        let _ = std::fs::remove_dir_all(target);
        let _ = std::fs::remove_file(dir);
    } else {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `cp -a`: the files and directories under `from` copied to `to` (which must not exist).
pub(crate) fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)?;
        }
    }
    Ok(())
}

/// The host registry's files of the embedded world's node files (`coord/src/stores/file.rs`: one per node-file
/// path, named by the FNV-1a hash of the path as the store names it, symbolic links unresolved).
pub(crate) fn registry_files(dir: &std::path::Path, nodes: u64) -> Vec<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let base = match std::path::Path::new("/dev/shm").is_dir() {
        true => "/dev/shm/snowmint-claims",
        false => "/tmp/snowmint-claims",
    };
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    (0..nodes)
        .map(|n| {
            let node_file = dir.join("nodes").join(NAME).join(format!("{n}.lock"));
            let hash = node_file
                .as_os_str()
                .as_bytes()
                .iter()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
                });
            std::path::Path::new(base).join(format!("{hash:016x}"))
        })
        .collect()
}
