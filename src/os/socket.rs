//! What a Unix stream socket's peer has not read yet: Linux says it (`SIOCOUTQ`), macOS
//! too (`SO_NWRITE`); elsewhere nobody can tell, and the caller waits a fixed pause instead.

use std::io;
use std::os::fd::AsRawFd;

/// How much written to the socket its peer has not read yet (0 once it has read it all; on
/// Linux counted in buffer memory, not bytes), or `None` where the system cannot say.
pub fn unread_bytes(socket: &impl AsRawFd) -> io::Result<Option<usize>> {
    platform::unread_bytes(socket.as_raw_fd())
}

#[cfg(target_os = "linux")]
mod platform {
    use super::*;

    pub(super) fn unread_bytes(fd: std::os::fd::RawFd) -> io::Result<Option<usize>> {
        let mut unread: nix::libc::c_int = 0;
        // SAFETY: SIOCOUTQ (TIOCOUTQ) stores one int through the pointer, which points at
        // `unread`; the descriptor is a socket the caller borrows.
        let result = unsafe {
            nix::libc::ioctl(
                fd,
                nix::libc::TIOCOUTQ,
                &mut unread as *mut nix::libc::c_int,
            )
        };
        if result == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(Some(usize::try_from(unread).unwrap_or(0)))
    }
}

#[cfg(any(target_os = "macos", target_os = "ios"))]
mod platform {
    use super::*;

    pub(super) fn unread_bytes(fd: std::os::fd::RawFd) -> io::Result<Option<usize>> {
        let mut unread: nix::libc::c_int = 0;
        let mut size = std::mem::size_of::<nix::libc::c_int>() as nix::libc::socklen_t;
        // SAFETY: SO_NWRITE stores one int through the pointer, which points at `unread`,
        // and its size through `size`; the descriptor is a socket the caller borrows.
        let result = unsafe {
            nix::libc::getsockopt(
                fd,
                nix::libc::SOL_SOCKET,
                nix::libc::SO_NWRITE,
                (&mut unread as *mut nix::libc::c_int).cast(),
                &mut size,
            )
        };
        if result == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(Some(usize::try_from(unread).unwrap_or(0)))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "ios")))]
mod platform {
    use super::*;

    pub(super) fn unread_bytes(_fd: std::os::fd::RawFd) -> io::Result<Option<usize>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn bytes_the_peer_has_not_read_are_counted_until_it_reads_them() {
        let (mut ours, mut theirs) = std::os::unix::net::UnixStream::pair().expect("a pair");
        assert_eq!(unread_bytes(&ours).expect("asked"), Some(0));
        ours.write_all(b"hello").expect("written");
        // Linux counts the buffers' memory, not the bytes: some, until they are read.
        assert!(unread_bytes(&ours).expect("asked").is_some_and(|n| n >= 5));
        let mut buffer = [0u8; 5];
        theirs.read_exact(&mut buffer).expect("read");
        assert_eq!(unread_bytes(&ours).expect("asked"), Some(0));
    }
}
