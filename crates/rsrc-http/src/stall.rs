//! A connection whose peer stops reading is closed: [`Progress`] wraps the socket and
//! fails a write that has not moved [`MIN_PROGRESS`] bytes within the stall timeout.
//!
//! Invariant: while a response is being written, at least `MIN_PROGRESS` bytes reach the
//! socket in every period of `stall` during which writes wait, or the connection ends and
//! the response (and everything it buffered) is dropped. A reader that keeps up never
//! meets the timer: it is armed only when a write has to wait.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Bytes a waiting writer must move per stall period (a drip slower than this is a
/// stall too).
pub(crate) const MIN_PROGRESS: usize = 16 * 1024;

/// A socket whose writes must make progress.
pub(crate) struct Progress<S> {
    inner: S,
    stall: Duration,
    /// Armed when a write first has to wait; cleared once enough bytes moved.
    deadline: Option<Pin<Box<Sleep>>>,
    moved: usize,
}

impl<S> Progress<S> {
    pub(crate) fn new(inner: S, stall: Duration) -> Self {
        Progress {
            inner,
            stall,
            deadline: None,
            moved: 0,
        }
    }

    fn wrote(&mut self, n: usize) {
        rsrc::observe::sent(rsrc::observe::Transport::Tcp, n);
        if self.deadline.is_some() {
            self.moved += n;
            if self.moved >= MIN_PROGRESS {
                self.deadline = None;
                self.moved = 0;
            }
        }
    }

    /// A write had to wait: arm the timer, or fail if it ran out.
    fn waiting(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let stall = self.stall;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        ready!(deadline.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client stopped reading the response",
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Progress<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Progress<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                self.wrote(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(Ok(n)) => {
                self.wrote(n);
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt as _;

    #[tokio::test(start_paused = true)]
    async fn a_writer_whose_reader_stalls_fails_after_the_timeout() {
        // A pipe with room for 64 KiB that nobody reads.
        let (client, server) = tokio::io::duplex(64 * 1024);
        let mut w = Progress::new(server, Duration::from_secs(30));
        let start = tokio::time::Instant::now();
        let err = w.write_all(&vec![0; 1 << 20]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(start.elapsed(), Duration::from_secs(30));
        drop(client);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reader_that_keeps_up_is_never_cut() {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let reader = tokio::spawn(async move {
            let mut sink = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut client, &mut sink)
                .await
                .map(|_| sink.len())
        });
        let mut w = Progress::new(server, Duration::from_secs(30));
        w.write_all(&vec![1; 4 << 20]).await.unwrap();
        w.shutdown().await.unwrap();
        drop(w);
        assert_eq!(reader.await.unwrap().unwrap(), 4 << 20);
    }
}
