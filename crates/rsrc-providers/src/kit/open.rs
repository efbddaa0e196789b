//! Opening and reading one file beneath a root's capability handle, safely: only regular
//! files, never blocking, never more than the cap; and how a refusal or failure reads to a
//! client. Shared by the providers that serve directories (`fs`, `skills`).
//!
//! Invariants:
//! - A file is opened with `O_NONBLOCK | O_NOCTTY` through the root's capability handle
//!   and checked to be a regular file *after* opening (on the open handle), so a FIFO,
//!   device or socket swapped in after a `stat` is never read and never blocks.
//! - At most `cap + 1` bytes are read: a file larger than the cap, or one that grows past
//!   it while being read, is refused rather than truncated.
//! - A large file is read on a blocking thread ([`read_file`]), once the server's budget
//!   of content in flight has room for it, and stops between chunks once its request
//!   goes away ([`super::blocking`]).
//! - Everything that means "not reachable from this root" answers exactly like a missing
//!   resource, and no host path ever reaches the client ([`io_error`]).

use std::io::{self, Read};

use cap_std::fs::{Dir, File, Metadata, OpenOptions, OpenOptionsExt};

use rsrc::{RequestContext, ResourceError};

use super::blocking::{self, Panicked, Signal, Stop, cancelled, is_stopped};
use super::refusal::refused;
use super::rel_path::RelPath;

/// Files up to this size are read on the calling task by default; larger ones on a
/// blocking thread. Page-cache reads of small files cost microseconds, less than a
/// thread hop.
pub(crate) const INLINE_READ: u64 = 256 * 1024;

/// Opening must never block (a FIFO) nor adopt a terminal.
fn open_flags() -> i32 {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    i32::try_from(flags.bits()).unwrap_or(0)
}

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Not a regular file (a FIFO, device, socket…).
    NotRegular,
    /// Larger than the cap (at least `size` bytes).
    TooLarge { size: u64 },
    /// Stopped before the end: nobody waits for it any more.
    Cancelled,
    /// The filesystem said no.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl From<Panicked> for ReadError {
    fn from(e: Panicked) -> Self {
        ReadError::Io(e.into())
    }
}

/// Opens `path` without blocking (a FIFO) or adopting a terminal, and reads its metadata
/// from the open handle. Only regular files and directories are accepted.
pub(crate) fn open_checked(dir: &Dir, path: &RelPath) -> Result<(File, Metadata), ReadError> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(open_flags());
    let file = dir.open_with(path.to_path(), &options)?;
    let md = file.metadata()?;
    if !(md.is_file() || md.is_dir()) {
        return Err(ReadError::NotRegular);
    }
    Ok((file, md))
}

/// Like [`open_checked`], and says whether a symbolic link was followed on the way (then
/// the caller must check what the path resolved to). On Linux the file is first opened
/// with `RESOLVE_NO_SYMLINKS`: a path without links, the common case, costs no more than
/// the open itself; any failure of that attempt (a link, another kernel) falls back to
/// the resolving open.
pub(crate) fn open_resolved(
    dir: &Dir,
    path: &RelPath,
) -> Result<(File, Metadata, bool), ReadError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let opened = rustix::fs::openat2(
            dir,
            path.to_path(),
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        );
        if let Ok(fd) = opened {
            let file = File::from_std(std::fs::File::from(fd));
            let md = file.metadata()?;
            if !(md.is_file() || md.is_dir()) {
                return Err(ReadError::NotRegular);
            }
            return Ok((file, md, false));
        }
    }
    let (file, md) = open_checked(dir, path)?;
    Ok((file, md, true))
}

/// Reads a whole open regular file of at most `cap` bytes (`md` is its metadata): on the
/// calling task if it is at most `inline` bytes, else on a blocking thread once the
/// server's budget of content in flight has room for it. The blocking read stops between
/// chunks when the returned future is dropped (the request was cancelled, or its client
/// went away).
pub(crate) async fn read_file(
    ctx: &RequestContext,
    file: File,
    md: Metadata,
    cap: u64,
    inline: u64,
) -> Result<Vec<u8>, ReadError> {
    if md.len() <= inline {
        return read_open(file, &md, cap, &Stop::default());
    }
    if md.len() <= cap {
        ctx.reserve(md.len()).await;
    }
    blocking::stoppable(move |stop| read_open(file, &md, cap, stop)).await
}

/// Reads a whole open regular file of at most `cap` bytes; `md` is its metadata.
///
/// A large file is read in chunks, and `stop` is looked at before each: once it is set
/// (the request was cancelled, or its client went away) the read ends with
/// [`ReadError::Cancelled`] instead of finishing work nobody will see.
pub(crate) fn read_open(
    file: File,
    md: &Metadata,
    cap: u64,
    stop: &dyn Signal,
) -> Result<Vec<u8>, ReadError> {
    if !md.is_file() {
        return Err(ReadError::NotRegular);
    }
    if md.len() > cap {
        return Err(ReadError::TooLarge { size: md.len() });
    }
    if md.len() <= SINGLE_READ_MAX {
        return read_capped(file, md.len(), cap);
    }
    // Larger files: no zero-filled buffer; the end costs one more (cheap) read. Read
    // through the standard library's `File`, which reads into a vector's spare capacity
    // as it is; through any other reader, each chunk would be zeroed first.
    let buf = Vec::with_capacity(usize::try_from(md.len()).unwrap_or(0));
    read_chunked(file.into_std(), buf, cap, stop)
}

/// A filesystem error as the client sees it. Everything that means "not reachable from
/// this root" — absent, not a directory, an escape refused by the capability handle, a
/// link loop, a name too long, no permission, a socket or device that cannot be opened —
/// answers exactly like a missing resource, and no host path ever reaches the client.
pub(crate) fn io_error(uri: &str, e: &io::Error) -> ResourceError {
    use rustix::io::Errno;
    if is_stopped(e) {
        return cancelled(uri);
    }
    let unreachable = matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory | io::ErrorKind::PermissionDenied
    ) || e.raw_os_error().is_some_and(|code| {
        [Errno::LOOP, Errno::NAMETOOLONG, Errno::NXIO, Errno::NODEV]
            .iter()
            .any(|errno| errno.raw_os_error() == code)
    });
    if unreachable {
        tracing::debug!(%uri, error = %e, "not served");
        ResourceError::not_found(uri)
    } else {
        ResourceError::internal(format!("{uri}: {e}"))
    }
}

/// A failed read of `uri` (read under `cap` bytes) as the client sees it.
pub(crate) fn read_error(uri: &str, e: ReadError, cap: u64) -> ResourceError {
    match e {
        ReadError::NotRegular => refused(uri, "not a regular file"),
        ReadError::Cancelled => cancelled(uri),
        ReadError::TooLarge { size } => ResourceError::too_large(uri.to_owned(), size, cap),
        ReadError::Io(e) => io_error(uri, &e),
    }
}

/// How much is read between two looks at the stop flag.
const CHUNK: u64 = 1024 * 1024;

/// Reads to the end into `buf`, refusing more than `cap` bytes, looking at `stop` before
/// every chunk.
fn read_chunked(
    file: impl Read,
    mut buf: Vec<u8>,
    cap: u64,
    stop: &dyn Signal,
) -> Result<Vec<u8>, ReadError> {
    let mut file = file.take(cap + 1);
    loop {
        if stop.stopped() {
            return Err(ReadError::Cancelled);
        }
        if (&mut file).take(CHUNK).read_to_end(&mut buf)? == 0 {
            break;
        }
    }
    if buf.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            size: buf.len() as u64,
        });
    }
    Ok(buf)
}

/// Files up to this size are read with one `read` call into a zero-filled buffer.
const SINGLE_READ_MAX: u64 = 64 * 1024;

/// Reads a regular file expected to hold `expected` bytes, refusing more than `cap`.
///
/// A read of a regular file returns fewer bytes than asked only at its end, so a short
/// read that brings exactly the size `fstat` reported means the file is complete: one
/// `read` call instead of a second one just to see the end. Anything else (a file that
/// changed, a procfs-like file whose size says nothing) is read on until a read returns
/// nothing.
fn read_capped(mut file: impl Read, expected: u64, cap: u64) -> Result<Vec<u8>, ReadError> {
    // Room for one byte more than expected: a file that grew shows it at once.
    let want = usize::try_from(expected.min(cap) + 1).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; want];
    let mut filled = 0;
    loop {
        let n = match file.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        let asked = buf.len() - filled;
        filled += n;
        if filled as u64 > cap {
            return Err(ReadError::TooLarge {
                size: filled as u64,
            });
        }
        if n == 0 || n < asked && filled as u64 == expected {
            buf.truncate(filled);
            return Ok(buf);
        }
        if n < asked {
            continue;
        }
        // The buffer is full and the file goes on: it grew. Read on, up to the cap.
        let grown = (buf.len() * 2).min(usize::try_from(cap + 1).unwrap_or(usize::MAX));
        buf.resize(grown.max(buf.len() + 1), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, like a file read while it is written.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.1).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_file_read_matches_its_size_or_is_refused_past_the_cap() {
        let data = b"0123456789";
        assert_eq!(read_capped(&data[..], 10, 100).unwrap(), data);
        assert_eq!(
            read_capped(&data[..], 0, 100).unwrap(),
            data,
            "grew since fstat"
        );
        assert_eq!(read_capped(&data[..], 20, 100).unwrap(), data, "shrank");
        assert!(matches!(
            read_capped(&data[..], 4, 8),
            Err(ReadError::TooLarge { size: 9 })
        ));
        assert!(read_capped(&data[..], 10, 10).is_ok(), "exactly the cap");
        assert!(read_capped(&b""[..], 0, 10).unwrap().is_empty());
    }

    #[test]
    fn short_reads_that_do_not_match_the_size_are_read_on() {
        let data = b"a file whose size fstat does not know";
        for expected in [0, 5, 1000] {
            let got = read_capped(Trickle(data, 3), expected, 1 << 20).unwrap();
            assert_eq!(got, data, "{expected}");
        }
        let got = read_capped(Trickle(data, 3), data.len() as u64, 1 << 20).unwrap();
        assert_eq!(got, data);
    }

    /// Endless bytes that set the stop signal after `after` reads.
    struct Endless<'a> {
        stop: &'a Stop,
        after: usize,
        reads: usize,
    }

    impl Read for Endless<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if self.reads == self.after {
                self.stop.stop();
            }
            out.fill(b'x');
            Ok(out.len())
        }
    }

    #[test]
    fn a_large_read_stops_at_the_next_chunk_once_stopped() {
        let stop = Stop::default();
        let mut endless = Endless {
            stop: &stop,
            after: 3,
            reads: 0,
        };
        // Far more than the cap allows: without the stop it would read the cap and more.
        let got = read_chunked(&mut endless, Vec::new(), 1 << 40, &stop);
        assert!(matches!(got, Err(ReadError::Cancelled)));
        assert!(endless.reads < 64, "{} reads after the stop", endless.reads);
    }

    #[test]
    fn a_chunked_read_matches_the_file_or_is_refused_past_the_cap() {
        let stop = Stop::default();
        let data = vec![7u8; 3 * CHUNK as usize + 5];
        let got = read_chunked(&data[..], Vec::new(), 1 << 30, &stop).unwrap();
        assert_eq!(got, data);
        let over = read_chunked(&data[..], Vec::new(), 2 * CHUNK, &stop);
        assert!(matches!(over, Err(ReadError::TooLarge { .. })));
    }
}
