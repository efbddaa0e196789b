//! Work on a blocking thread that stops when nobody waits for it any more.
//!
//! A provider's long work (walking a directory tree, a git history or a tree, reading a
//! large file, running SQLite statements) runs on a blocking thread of the runtime, so
//! that the runtime's other requests never wait on it. The request that waits for the
//! work may go away before it ends: its client cancels it or disconnects, and the engine
//! drops the request's future. [`run`] ties the two together: the work gets a
//! [`Signal`], which is set as soon as the awaiting future is dropped, and looks at it
//! between steps (a directory, an entry, a commit, a tree level, a chunk read, a SQLite
//! progress check), giving up with [`Stopped`] once it is set.
//!
//! Invariants:
//! - Dropping the future [`run`] returns sets its signal, whether the work is queued,
//!   running or done; the work sees it at its next look.
//! - Work stopped by its signal ends in an error ([`Stopped`], answered as
//!   [`cancelled`]), never in a partial result that could pass for a whole one (a short
//!   listing, an incomplete history or directory put in a cache).
//! - A panic on the blocking thread fails only the work that panicked, as an internal
//!   error ([`Panicked`]).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rsrc::ResourceError;

/// What long work looks at between steps to know whether it is still wanted.
pub(crate) trait Signal: Send + Sync + std::fmt::Debug {
    /// Whether the work should end now.
    fn stopped(&self) -> bool;

    /// Tells the work to end at its next look: nobody waits for it any more.
    fn stop(&self);

    /// `Err(Stopped)` once the work should end: `signal.check()?` between steps.
    #[cfg_attr(not(any(feature = "fs", feature = "git")), allow(dead_code))]
    fn check(&self) -> Result<(), Stopped> {
        if self.stopped() { Err(Stopped) } else { Ok(()) }
    }
}

/// The plain signal: set once, when its request goes away. A fresh one, never set, is
/// what work that answers no request (a walk ahead, a watcher's poll) looks at.
#[derive(Debug, Default)]
#[cfg_attr(
    not(any(feature = "fs", feature = "git", feature = "skills")),
    allow(dead_code)
)]
pub(crate) struct Stop(AtomicBool);

impl Signal for Stop {
    fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The work stopped before its end because its request went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped: the request went away")
    }
}

impl std::error::Error for Stopped {}

/// For work that fails with I/O errors (directory walks): [`is_stopped`] tells it apart.
impl From<Stopped> for io::Error {
    fn from(stopped: Stopped) -> io::Error {
        io::Error::new(io::ErrorKind::Interrupted, stopped)
    }
}

/// Whether `e` is a [`Stopped`] carried as an I/O error.
#[cfg_attr(not(any(feature = "fs", feature = "skills")), allow(dead_code))]
pub(crate) fn is_stopped(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Stopped>())
}

/// What the client would see of work about `uri` that stopped (it is gone, so in practice
/// nobody does): the resource is unavailable, not missing nor broken.
#[cfg_attr(
    not(any(feature = "fs", feature = "git", feature = "skills")),
    allow(dead_code)
)]
pub(crate) fn cancelled(uri: &str) -> ResourceError {
    ResourceError::unavailable(uri, format!("{uri}: the request was cancelled"))
}

/// The blocking thread panicked, or the runtime shut down before the work ran.
#[derive(Debug)]
pub(crate) struct Panicked(pub(crate) tokio::task::JoinError);

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the blocking task failed: {}", self.0)
    }
}

impl From<Panicked> for ResourceError {
    fn from(e: Panicked) -> ResourceError {
        ResourceError::internal(e)
    }
}

impl From<Panicked> for io::Error {
    fn from(e: Panicked) -> io::Error {
        io::Error::other(e.to_string())
    }
}

/// Sets its signal when dropped: held by the future that awaits the work.
struct StopOnDrop<S: Signal>(Arc<S>);

impl<S: Signal> Drop for StopOnDrop<S> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Runs `work` on a blocking thread of the current runtime with `signal`, which is set as
/// soon as the returned future is dropped (the request was cancelled, or its client went
/// away): `work` looks at it between steps and gives up once it is set.
pub(crate) async fn run<S, T, E>(
    signal: Arc<S>,
    work: impl FnOnce(&S) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    S: Signal + 'static,
    T: Send + 'static,
    E: From<Panicked> + Send + 'static,
{
    let guard = StopOnDrop(Arc::clone(&signal));
    // The work runs in the request's span, so what it traces is the request's child.
    let span = tracing::Span::current();
    let done = tokio::task::spawn_blocking(move || span.in_scope(|| work(&signal))).await;
    drop(guard);
    done.unwrap_or_else(|e| Err(Panicked(e).into()))
}

/// [`run`] with a fresh [`Stop`].
#[cfg_attr(
    not(any(feature = "fs", feature = "git", feature = "skills")),
    allow(dead_code)
)]
pub(crate) async fn stoppable<T, E>(
    work: impl FnOnce(&Stop) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<Panicked> + Send + 'static,
{
    run(Arc::new(Stop::default()), work).await
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Mutex, mpsc};

    use futures_util::FutureExt as _;

    use super::*;

    /// What the test hears from the work of [`drop_at`].
    enum Heard<T> {
        /// The work is held at the look it was to be stopped at.
        Held,
        /// The work returned.
        Done(Result<T, ResourceError>),
    }

    /// A signal for tests: it holds the work at its `at`-th look until the test lets it
    /// go, then answers as a [`Stop`] does; it counts the looks once it is set.
    struct Held<T> {
        at: usize,
        looks: AtomicUsize,
        after_stop: AtomicUsize,
        stop: Stop,
        tell: Mutex<mpsc::Sender<Heard<T>>>,
        go: Mutex<mpsc::Receiver<()>>,
    }

    impl<T> std::fmt::Debug for Held<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Held")
                .field("at", &self.at)
                .finish_non_exhaustive()
        }
    }

    impl<T: Send> Signal for Held<T> {
        fn stopped(&self) -> bool {
            if self.looks.fetch_add(1, Ordering::SeqCst) + 1 == self.at {
                let _ = self.tell.lock().unwrap().send(Heard::Held);
                let _ = self.go.lock().unwrap().recv();
            }
            let stopped = self.stop.stopped();
            if stopped {
                self.after_stop.fetch_add(1, Ordering::SeqCst);
            }
            stopped
        }

        fn stop(&self) {
            self.stop.stop();
        }
    }

    /// Runs `work` through [`run`] as a request does, and drops the awaiting future (the
    /// request goes away) while the work is at its `at`-th look at the signal; then lets
    /// the work go on. What the work returned, and how many times it looked at its
    /// signal after the drop. Panics if the work ends before its `at`-th look.
    pub(crate) async fn drop_at<T: Send + std::fmt::Debug + 'static>(
        at: usize,
        work: impl FnOnce(&dyn Signal) -> Result<T, ResourceError> + Send + 'static,
    ) -> (Result<T, ResourceError>, usize) {
        let (tell, heard) = mpsc::channel();
        let (go, wait) = mpsc::channel();
        let signal = Arc::new(Held {
            at,
            looks: AtomicUsize::new(0),
            after_stop: AtomicUsize::new(0),
            stop: Stop::default(),
            tell: Mutex::new(tell.clone()),
            go: Mutex::new(wait),
        });
        let seen = Arc::clone(&signal);
        let mut request = Box::pin(run(signal, move |s: &Held<T>| {
            let _ = tell.send(Heard::Done(work(s)));
            Ok::<(), ResourceError>(())
        }));
        // Polled once: the work is handed to a blocking thread.
        let polled = (&mut request).now_or_never();
        let heard = Arc::new(Mutex::new(heard));
        let next = || {
            let heard = Arc::clone(&heard);
            tokio::task::spawn_blocking(move || heard.lock().unwrap().recv().unwrap())
        };
        match next().await.unwrap() {
            Heard::Held => {}
            Heard::Done(done) => panic!("the work ended before its look {at}: {done:?}"),
        }
        assert!(polled.is_none(), "the request ended before the drop");
        drop(request);
        go.send(()).unwrap();
        let Heard::Done(done) = next().await.unwrap() else {
            unreachable!("held once only")
        };
        (done, seen.after_stop.load(Ordering::SeqCst))
    }

    /// Asserts that work stopped by [`drop_at`] gave up at once, as a cancellation.
    pub(crate) fn gave_up<T: std::fmt::Debug>((got, looks): (Result<T, ResourceError>, usize)) {
        assert!(
            matches!(got, Err(ResourceError::Unavailable { .. })),
            "not cancelled: {got:?}"
        );
        assert_eq!(looks, 1, "it went on after its request went away");
    }

    /// The work: waits for `go`, then reports whether its signal is set.
    fn observe(
        go: mpsc::Receiver<()>,
        seen: mpsc::Sender<bool>,
    ) -> impl FnOnce(&Stop) -> Result<(), ResourceError> + Send + 'static {
        move |stop| {
            go.recv().unwrap();
            seen.send(stop.stopped()).unwrap();
            Ok(())
        }
    }

    #[tokio::test]
    async fn dropping_the_awaiting_future_sets_the_signal_the_work_sees() {
        let (go, wait) = mpsc::channel();
        let (seen, report) = mpsc::channel();
        // Polled once (the work is handed to a blocking thread), then dropped.
        assert!(stoppable(observe(wait, seen)).now_or_never().is_none());
        go.send(()).unwrap();
        assert!(
            report.recv().unwrap(),
            "the work did not see its request go"
        );
    }

    #[tokio::test]
    async fn work_whose_future_is_awaited_is_never_stopped() {
        let (go, wait) = mpsc::channel();
        let (seen, report) = mpsc::channel();
        go.send(()).unwrap();
        stoppable(observe(wait, seen)).await.unwrap();
        assert!(!report.recv().unwrap());
    }

    #[tokio::test]
    async fn work_dropped_at_a_look_sees_the_stop_at_that_look() {
        let got = drop_at(3, |stop| {
            for _ in 0..10 {
                stop.check().map_err(|_| cancelled("x"))?;
            }
            Ok(())
        })
        .await;
        gave_up(got);
    }

    #[tokio::test]
    async fn a_panic_fails_only_its_own_work() {
        let failed: Result<(), ResourceError> = stoppable(|_| panic!("boom")).await;
        assert!(matches!(failed, Err(ResourceError::Internal { .. })));
        let fine: Result<u8, ResourceError> = stoppable(|_| Ok(7)).await;
        assert_eq!(fine.unwrap(), 7);
    }

    #[test]
    fn a_stop_carried_as_an_io_error_is_told_apart() {
        let e: io::Error = Stopped.into();
        assert!(is_stopped(&e));
        assert!(!is_stopped(&io::Error::from(io::ErrorKind::Interrupted)));
    }
}
