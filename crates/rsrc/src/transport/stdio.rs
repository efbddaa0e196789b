//! Standard input and output as a transport.
//!
//! When stdin and stdout are pipes or sockets (how MCP clients launch servers), they are
//! driven as non-blocking file descriptors on the runtime's own reactor: no helper thread,
//! no thread hop per message. Anything else (a terminal, a regular file) falls back to
//! tokio's blocking-thread stdio. Pipes are put back into blocking mode on exit, since
//! their open file description may be shared with other processes. [`stdio_streams`]
//! hands the same streams to a server of one's own (`rsrc-rmcp` gives them to rmcp).
//!
//! On other systems than Unix, stdin and stdout are always tokio's blocking-thread stdio.
//!
//! Invariant: nothing but protocol messages is ever written to stdout.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
#[cfg(unix)]
use std::{
    fs::File,
    os::fd::{AsFd, OwnedFd},
    os::unix::fs::FileTypeExt,
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
#[cfg(unix)]
use tokio::net::{UnixStream, unix::pipe};

use super::stream::{StreamConfig, serve_stream};
use crate::server::Server;

/// What standard input is read through.
enum Input {
    #[cfg(unix)]
    Pipe(pipe::Receiver),
    #[cfg(unix)]
    Socket(UnixStream),
    Std(tokio::io::Stdin),
}

/// What standard output is written through.
enum Output {
    #[cfg(unix)]
    Pipe(pipe::Sender),
    #[cfg(unix)]
    Socket(UnixStream),
    Std(tokio::io::Stdout),
}

#[cfg(unix)]
enum Kind {
    Pipe(File),
    Socket(std::os::unix::net::UnixStream),
    Other,
}

#[cfg(unix)]
fn classify(fd: OwnedFd) -> io::Result<Kind> {
    let file = File::from(fd);
    let file_type = file.metadata()?.file_type();
    Ok(if file_type.is_fifo() {
        Kind::Pipe(file)
    } else if file_type.is_socket() {
        let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        socket.set_nonblocking(true)?;
        Kind::Socket(socket)
    } else {
        Kind::Other
    })
}

impl Input {
    #[cfg(unix)]
    fn open() -> io::Result<Input> {
        Ok(match classify(io::stdin().as_fd().try_clone_to_owned()?)? {
            Kind::Pipe(f) => Input::Pipe(pipe::Receiver::from_file(f)?),
            Kind::Socket(s) => Input::Socket(UnixStream::from_std(s)?),
            Kind::Other => Input::Std(tokio::io::stdin()),
        })
    }

    #[cfg(not(unix))]
    fn open() -> io::Result<Input> {
        Ok(Input::Std(tokio::io::stdin()))
    }

    fn restore(self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Input::Pipe(p) => p.into_blocking_fd().map(drop),
            #[cfg(unix)]
            Input::Socket(s) => s.into_std()?.set_nonblocking(false),
            Input::Std(_) => Ok(()),
        }
    }
}

/// The pipe buffer asked for on stdout: a 1 MiB response then crosses in one or two
/// rounds instead of sixteen 64 KiB ones, each a wake-up of the reader and of the server.
#[cfg(any(target_os = "linux", target_os = "android"))]
const PIPE_BUFFER: usize = 1024 * 1024;

impl Output {
    #[cfg(unix)]
    fn open() -> io::Result<Output> {
        Ok(
            match classify(io::stdout().as_fd().try_clone_to_owned()?)? {
                Kind::Pipe(f) => {
                    // Best effort: the system may cap pipe sizes lower (Linux only).
                    #[cfg(any(target_os = "linux", target_os = "android"))]
                    let _ = rustix::pipe::fcntl_setpipe_size(&f, PIPE_BUFFER);
                    Output::Pipe(pipe::Sender::from_file(f)?)
                }
                Kind::Socket(s) => Output::Socket(UnixStream::from_std(s)?),
                Kind::Other => Output::Std(tokio::io::stdout()),
            },
        )
    }

    #[cfg(not(unix))]
    fn open() -> io::Result<Output> {
        Ok(Output::Std(tokio::io::stdout()))
    }

    fn restore(self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Output::Pipe(p) => p.into_blocking_fd().map(drop),
            #[cfg(unix)]
            Output::Socket(s) => s.into_std()?.set_nonblocking(false),
            Output::Std(_) => Ok(()),
        }
    }
}

/// Standard input as an [`AsyncRead`], for a server of one's own (rmcp's transports take
/// any reader and writer): what [`serve_stdio`] reads. Dropping it puts the pipe or socket
/// back into blocking mode.
pub struct StdinStream(Option<Input>);

/// Standard output as an [`AsyncWrite`]: what [`serve_stdio`] writes. Dropping it puts the
/// pipe or socket back into blocking mode.
pub struct StdoutStream(Option<Output>);

/// Standard input and output, driven as [`serve_stdio`] drives them: on the runtime's own
/// reactor when they are pipes or sockets, through tokio's blocking-thread stdio otherwise.
///
/// Take them once, and keep both for as long as either is in use: dropping one puts its
/// pipe back into blocking mode, which a second pair (or the other half of a socket
/// shared by both) would then block the runtime on.
///
/// # Panics
///
/// Outside a tokio runtime with I/O enabled, when stdin or stdout is a pipe or a socket.
pub fn stdio_streams() -> io::Result<(StdinStream, StdoutStream)> {
    Ok((
        StdinStream(Some(Input::open()?)),
        StdoutStream(Some(Output::open()?)),
    ))
}

impl Drop for StdinStream {
    fn drop(&mut self) {
        if let Some(Err(e)) = self.0.take().map(Input::restore) {
            tracing::warn!(error = %e, "stdin could not be put back into blocking mode");
        }
    }
}

impl Drop for StdoutStream {
    fn drop(&mut self) {
        if let Some(Err(e)) = self.0.take().map(Output::restore) {
            tracing::warn!(error = %e, "stdout could not be put back into blocking mode");
        }
    }
}

impl std::fmt::Debug for StdinStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StdinStream")
    }
}

impl std::fmt::Debug for StdoutStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StdoutStream")
    }
}

/// The stream is only emptied by `drop`, after which it is never polled.
fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the stream was dropped")
}

impl AsyncRead for StdinStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Some(Input::Pipe(p)) => Pin::new(p).poll_read(cx, buf),
            #[cfg(unix)]
            Some(Input::Socket(s)) => Pin::new(s).poll_read(cx, buf),
            Some(Input::Std(s)) => Pin::new(s).poll_read(cx, buf),
            None => Poll::Ready(Err(closed())),
        }
    }
}

impl AsyncWrite for StdoutStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Some(Output::Pipe(p)) => Pin::new(p).poll_write(cx, buf),
            #[cfg(unix)]
            Some(Output::Socket(s)) => Pin::new(s).poll_write(cx, buf),
            Some(Output::Std(s)) => Pin::new(s).poll_write(cx, buf),
            None => Poll::Ready(Err(closed())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Some(Output::Pipe(p)) => Pin::new(p).poll_flush(cx),
            #[cfg(unix)]
            Some(Output::Socket(s)) => Pin::new(s).poll_flush(cx),
            Some(Output::Std(s)) => Pin::new(s).poll_flush(cx),
            None => Poll::Ready(Err(closed())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Some(Output::Pipe(p)) => Pin::new(p).poll_shutdown(cx),
            #[cfg(unix)]
            Some(Output::Socket(s)) => Pin::new(s).poll_shutdown(cx),
            Some(Output::Std(s)) => Pin::new(s).poll_shutdown(cx),
            None => Poll::Ready(Err(closed())),
        }
    }
}

/// Serves `server` on stdin/stdout until stdin closes. A closed stdout (the client went
/// away) ends serving normally.
pub async fn serve_stdio(server: &Server, config: &StreamConfig) -> io::Result<()> {
    let (mut input, mut output) = stdio_streams()?;
    match serve_stream(server, &mut input, &mut output, config).await {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
