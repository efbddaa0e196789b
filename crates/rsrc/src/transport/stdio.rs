//! Standard input and output as a transport.
//!
//! When stdin and stdout are pipes or sockets (how MCP clients launch servers), they are
//! driven as non-blocking file descriptors on the runtime's own reactor: no helper thread,
//! no thread hop per message. Anything else (a terminal, a regular file) falls back to
//! tokio's blocking-thread stdio. Pipes are put back into blocking mode on exit, since
//! their open file description may be shared with other processes.
//!
//! On other systems than Unix, stdin and stdout are always tokio's blocking-thread stdio.
//!
//! Invariant: nothing but protocol messages is ever written to stdout.

use std::io;
#[cfg(unix)]
use std::{
    fs::File,
    os::fd::{AsFd, OwnedFd},
    os::unix::fs::FileTypeExt,
    pin::Pin,
    task::{Context, Poll},
};

#[cfg(unix)]
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
#[cfg(unix)]
use tokio::net::{UnixStream, unix::pipe};

use super::stream::{StreamConfig, serve_stream};
use crate::server::Server;

#[cfg(unix)]
enum Input {
    Pipe(pipe::Receiver),
    Socket(UnixStream),
    Std(tokio::io::Stdin),
}

#[cfg(unix)]
enum Output {
    Pipe(pipe::Sender),
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

#[cfg(unix)]
impl Input {
    fn open() -> io::Result<Input> {
        Ok(match classify(io::stdin().as_fd().try_clone_to_owned()?)? {
            Kind::Pipe(f) => Input::Pipe(pipe::Receiver::from_file(f)?),
            Kind::Socket(s) => Input::Socket(UnixStream::from_std(s)?),
            Kind::Other => Input::Std(tokio::io::stdin()),
        })
    }

    fn restore(self) -> io::Result<()> {
        match self {
            Input::Pipe(p) => p.into_blocking_fd().map(drop),
            Input::Socket(s) => s.into_std()?.set_nonblocking(false),
            Input::Std(_) => Ok(()),
        }
    }
}

/// The pipe buffer asked for on stdout: a 1 MiB response then crosses in one or two
/// rounds instead of sixteen 64 KiB ones, each a wake-up of the reader and of the server.
#[cfg(any(target_os = "linux", target_os = "android"))]
const PIPE_BUFFER: usize = 1024 * 1024;

#[cfg(unix)]
impl Output {
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

    fn restore(self) -> io::Result<()> {
        match self {
            Output::Pipe(p) => p.into_blocking_fd().map(drop),
            Output::Socket(s) => s.into_std()?.set_nonblocking(false),
            Output::Std(_) => Ok(()),
        }
    }
}

#[cfg(unix)]
impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Input::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            Input::Socket(s) => Pin::new(s).poll_read(cx, buf),
            Input::Std(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

#[cfg(unix)]
impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            Output::Socket(s) => Pin::new(s).poll_write(cx, buf),
            Output::Std(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_flush(cx),
            Output::Socket(s) => Pin::new(s).poll_flush(cx),
            Output::Std(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            Output::Socket(s) => Pin::new(s).poll_shutdown(cx),
            Output::Std(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// Serves `server` on stdin/stdout until stdin closes. A closed stdout (the client went
/// away) ends serving normally.
#[cfg(unix)]
pub async fn serve_stdio(server: &Server, config: &StreamConfig) -> io::Result<()> {
    let mut input = Input::open()?;
    let mut output = Output::open()?;
    let result = serve_stream(server, &mut input, &mut output, config).await;
    let restored = input.restore().and(output.restore());
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => restored,
        other => other.and(restored),
    }
}

/// Serves `server` on stdin/stdout until stdin closes. A closed stdout (the client went
/// away) ends serving normally.
#[cfg(not(unix))]
pub async fn serve_stdio(server: &Server, config: &StreamConfig) -> io::Result<()> {
    match serve_stream(server, tokio::io::stdin(), tokio::io::stdout(), config).await {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
