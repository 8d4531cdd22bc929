//! Everything that differs between Unix systems, in one place, each with a portable way that
//! runs on Linux too (so the tests exercise it):
//!
//! - [`process`]: process trees, liveness, command lines and owners, from `/proc` or, where
//!   there is none (macOS, the BSDs), from `ps -A -o ...` (`PANECTL_PROCESSES=ps` forces it).
//! - [`socket`]: how much a socket's peer has not read (Linux `SIOCOUTQ`, macOS `SO_NWRITE`,
//!   else unknown: the relay then waits a fixed pause).
//! - [`locks`]: whether a pid holds a `flock` (Linux `/proc/locks`; elsewhere the pid is
//!   trusted while it lives).
//!
//! Peer credentials come from tokio (`SO_PEERCRED` on Linux, `getpeereid` and
//! `LOCAL_PEERPID` on macOS) and nix (`getpeereid`), which already hide the difference.
//! docs/internals.md lists each place and how it is handled.

pub mod locks;
pub mod process;
pub mod socket;
