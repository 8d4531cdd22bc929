//! Whether a process holds a `flock` on a file: a pid written in a lock file is only trusted
//! while its process still holds the lock (a pid reused by another process does not).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Whether `pid` holds a `flock` on the file at `path`, as `/proc/locks` says. Where that
/// cannot be read (a system without it, or `PANECTL_PROCESSES=ps`), `true`: the caller then
/// trusts the pid while its process lives.
pub fn holds_lock(pid: u32, path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if super::process::Source::current() != super::process::Source::Proc {
        return true;
    }
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return true;
    };
    holds_in(&locks, pid, metadata.dev(), metadata.ino())
}

/// Whether the lines of `/proc/locks` hold a `flock` of `pid` on the file `dev`/`ino`.
fn holds_in(locks: &str, pid: u32, dev: u64, ino: u64) -> bool {
    let file = format!(
        "{:02x}:{:02x}:{}",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev),
        ino
    );
    locks.lines().any(|line| {
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
        let words: Vec<&str> = line.split_whitespace().collect();
        words.get(1) == Some(&"FLOCK")
            && words.get(4).and_then(|p| p.parse::<u32>().ok()) == Some(pid)
            && words.get(5) == Some(&file.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flock_is_found_by_pid_and_file() {
        let dev = nix::sys::stat::makedev(8, 1);
        let locks = "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 99 08:01:42 0 EOF\n";
        assert!(holds_in(locks, 1234, dev, 5678));
        assert!(!holds_in(locks, 1235, dev, 5678));
        assert!(!holds_in(locks, 1234, dev, 5679));
        assert!(!holds_in(locks, 99, dev, 42), "a POSIX lock is not a flock");
    }

    #[test]
    fn a_lock_this_process_holds_is_seen() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("lock");
        let file = std::fs::File::create(&path).expect("the file");
        assert!(!holds_lock(std::process::id(), &path));
        let locked = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .expect("locked");
        assert!(holds_lock(std::process::id(), &path));
        drop(locked);
        assert!(!holds_lock(
            std::process::id(),
            dir.path().join("none").as_path()
        ));
    }
}
