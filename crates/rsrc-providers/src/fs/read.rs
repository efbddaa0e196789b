//! Reading one file safely: only regular files, never more than the cap, and the kind of
//! content (text or binary, and its MIME type).
//!
//! Invariants:
//! - A file is opened with `O_NONBLOCK | O_NOCTTY` through the root's capability handle
//!   and checked to be a regular file *after* opening (on the open handle), so a FIFO,
//!   device or socket swapped in after a `stat` is never read and never blocks.
//! - At most `cap + 1` bytes are read: a file larger than the cap, or one that grows past
//!   it while being read, is refused rather than truncated.
//! - A large read stops between chunks once its stop flag is set.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cap_std::fs::{Dir, File, Metadata, OpenOptions, OpenOptionsExt};

use super::path::RelPath;

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

/// Reads a whole open regular file of at most `cap` bytes; `md` is its metadata.
///
/// A large file is read in chunks, and `stop` is checked before each: once it is set
/// (the request was cancelled, or its client went away) the read ends with
/// [`ReadError::Cancelled`] instead of finishing work nobody will see.
pub(crate) fn read_open(
    file: File,
    md: &Metadata,
    cap: u64,
    stop: &AtomicBool,
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
    // Larger files: no zero-filled buffer; the end costs one more (cheap) read.
    let buf = Vec::with_capacity(usize::try_from(md.len()).unwrap_or(0));
    read_chunked(file, buf, cap, stop)
}

/// Sets its flag when dropped: held by the future that waits for a blocking read, so that
/// dropping the future stops the read.
pub(crate) struct StopOnDrop(pub(crate) Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How much is read between two looks at the stop flag.
const CHUNK: u64 = 1024 * 1024;

/// Reads to the end into `buf`, refusing more than `cap` bytes, checking `stop` before
/// every chunk.
fn read_chunked(
    file: impl Read,
    mut buf: Vec<u8>,
    cap: u64,
    stop: &AtomicBool,
) -> Result<Vec<u8>, ReadError> {
    let mut file = file.take(cap + 1);
    loop {
        if stop.load(Ordering::Relaxed) {
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

/// The MIME type from the file name alone (for listings).
pub(crate) fn mime_from_name(name: &OsStr) -> Option<String> {
    let name = name.to_str()?;
    let ext = name.rsplit_once('.')?.1;
    let guess = mime_guess::from_ext(ext).first()?;
    Some(normalize(guess.essence_str()))
}

/// Types `mime_guess` spells differently from what hosts expect.
fn normalize(mime: &str) -> String {
    match mime {
        "text/x-markdown" => "text/markdown".into(),
        other => other.to_owned(),
    }
}

/// What a file's bytes are, by their magic numbers: a binary format (`Some(mime)`), or
/// nothing recognised.
pub(crate) fn sniff_binary(bytes: &[u8]) -> Option<&'static str> {
    let kind = infer::get(bytes)?;
    (kind.matcher_type() != infer::MatcherType::Text && !kind.mime_type().starts_with("text/"))
        .then(|| kind.mime_type())
}

/// The content as text, or back as bytes if it is not text.
///
/// Text is valid UTF-8 without NUL bytes (a NUL is the mark of binary data, as for git and
/// grep) that does not start with a binary format's magic number (a PDF can be pure
/// ASCII); anything else is sent as a blob.
pub(crate) fn text_or_bytes(bytes: Vec<u8>) -> Result<String, Vec<u8>> {
    let binary_format = sniff_binary(&bytes).is_some();
    match String::from_utf8(bytes) {
        Ok(text) if !binary_format && !text.as_bytes().contains(&0) => Ok(text),
        Ok(text) => Err(text.into_bytes()),
        Err(e) => Err(e.into_bytes()),
    }
}

/// The MIME type of content: for text, the name's type unless that type claims binary
/// content (then `text/plain`); for binary content, what its magic bytes say, else the
/// name's type, else `application/octet-stream`.
pub(crate) fn mime_for(name: &OsStr, bytes: &[u8], is_text: bool) -> String {
    let by_name = mime_from_name(name);
    if is_text {
        return match by_name {
            Some(m) if !looks_binary_type(&m) => m,
            _ => "text/plain".into(),
        };
    }
    if let Some(sniffed) = sniff_binary(bytes) {
        return sniffed.to_owned();
    }
    match by_name {
        Some(m) if !m.starts_with("text/") => m,
        _ => "application/octet-stream".into(),
    }
}

fn looks_binary_type(mime: &str) -> bool {
    mime.starts_with("image/") && mime != "image/svg+xml"
        || mime.starts_with("audio/")
        || mime.starts_with("video/")
        || mime == "application/octet-stream"
        || mime == "application/pdf"
        || mime == "application/zip"
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

    /// Endless bytes that set the stop flag after `after` reads.
    struct Endless<'a> {
        stop: &'a AtomicBool,
        after: usize,
        reads: usize,
    }

    impl Read for Endless<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if self.reads == self.after {
                self.stop.store(true, Ordering::Relaxed);
            }
            out.fill(b'x');
            Ok(out.len())
        }
    }

    #[test]
    fn a_large_read_stops_at_the_next_chunk_once_stopped() {
        let stop = AtomicBool::new(false);
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
        let stop = AtomicBool::new(false);
        let data = vec![7u8; 3 * CHUNK as usize + 5];
        let got = read_chunked(&data[..], Vec::new(), 1 << 30, &stop).unwrap();
        assert_eq!(got, data);
        let over = read_chunked(&data[..], Vec::new(), 2 * CHUNK, &stop);
        assert!(matches!(over, Err(ReadError::TooLarge { .. })));
    }

    #[test]
    fn types_come_from_the_name_when_the_content_agrees() {
        assert_eq!(mime_for(OsStr::new("a.md"), b"# x", true), "text/markdown");
        assert_eq!(
            mime_for(OsStr::new("a.rs"), b"fn main() {}", true),
            "text/x-rust"
        );
        assert_eq!(mime_for(OsStr::new("README"), b"hello", true), "text/plain");
        assert_eq!(
            mime_for(OsStr::new("a.json"), b"{}", true),
            "application/json"
        );
        // A .png that is really text is text.
        assert_eq!(
            mime_for(OsStr::new("fake.png"), b"hello", true),
            "text/plain"
        );
    }

    #[test]
    fn binary_content_is_sniffed() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(mime_for(OsStr::new("noext"), png, false), "image/png");
        assert_eq!(
            mime_for(OsStr::new("a.txt"), &[0xff, 0xfe, 0], false),
            "application/octet-stream"
        );
        assert_eq!(
            mime_for(OsStr::new("data.bin"), &[1, 2, 3], false),
            "application/octet-stream"
        );
    }
}
