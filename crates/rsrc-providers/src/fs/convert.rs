//! Format alternatives: converters that add a second representation of a file (SEP-2093's
//! "several entries with the same URI = the same content in other formats").
//!
//! A [`Converter`] declares which MIME types it accepts and produces one extra
//! representation from the raw bytes. A converter parses hostile input (any PDF in a
//! served directory), so conversions run under [`Conversions`]: at most
//! `max_conversions` at once, each within a wall-clock limit, and — with
//! [`Isolation::Process`], which `rsrc serve` uses — in a child process under
//! operating-system limits on memory and CPU time that really stop it.
//!
//! Invariant: a converter that fails, panics, runs out of time or memory, or says too
//! much only means the alternative is missing — the file itself is still served, and
//! nothing false is ever returned. See `docs/converters.md` for how to add one.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// A representation produced by a converter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// Its MIME type, e.g. `text/plain`.
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

/// Produces an alternative representation of files of some types.
pub trait Converter: Send + Sync + 'static {
    /// A short name, for logs, and to name it to a worker process.
    fn name(&self) -> &str;

    /// Whether this converter handles files of `mime_type`.
    fn accepts(&self, mime_type: &str) -> bool;

    /// Converts the raw bytes. `Ok(None)` means "nothing useful" (e.g. a scanned PDF with
    /// no text layer).
    fn convert(&self, bytes: &[u8]) -> Result<Option<Converted>, String>;
}

/// Where conversions run.
#[derive(Debug, Clone, Default)]
pub enum Isolation {
    /// On a blocking thread of this process. The time limit abandons a conversion but
    /// cannot stop it (its thread runs on, and keeps its slot until it ends), and its
    /// memory is not limited: for converters trusted with any input.
    #[default]
    InProcess,
    /// In a child process per conversion, killed at the time limit and held to the
    /// worker's limits by the operating system (Linux).
    Process(Worker),
}

/// A program that converts: run as `program args… NAME`, it reads a file on its stdin,
/// converts it with the converter called `NAME` and writes `MIME\nTEXT` on its stdout
/// (nothing, for "nothing useful"), or fails with a message on stderr. A binary makes
/// itself one by calling [`convert_worker`].
#[derive(Debug, Clone)]
pub struct Worker {
    /// The program.
    pub program: PathBuf,
    /// Its arguments, before the converter's name.
    pub args: Vec<OsString>,
    /// Address space it may use, in bytes (`RLIMIT_AS`; default 1 GiB).
    pub memory: u64,
    /// CPU time it may use, in whole seconds (`RLIMIT_CPU`; default 10 s).
    pub cpu: Duration,
}

impl Worker {
    /// `program args…` with the default limits.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Self {
        Worker {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            memory: 1024 * 1024 * 1024,
            cpu: Duration::from_secs(10),
        }
    }

    /// Applies the limits to the started worker `pid`: memory, CPU time, no files
    /// written, no core dump, few descriptors.
    #[cfg(target_os = "linux")]
    fn limit(&self, pid: Option<u32>) -> std::io::Result<()> {
        use rustix::process::{Pid, Resource, Rlimit, prlimit};
        let pid = pid
            .and_then(|p| i32::try_from(p).ok())
            .and_then(Pid::from_raw)
            .ok_or_else(|| std::io::Error::other("the worker has no process id"))?;
        let both = |n: u64| Rlimit {
            current: Some(n),
            maximum: Some(n),
        };
        let cpu = self.cpu.as_secs().max(1);
        prlimit(Some(pid), Resource::As, both(self.memory))?;
        // SIGXCPU at the soft limit, SIGKILL a second later.
        prlimit(
            Some(pid),
            Resource::Cpu,
            Rlimit {
                current: Some(cpu),
                maximum: Some(cpu + 1),
            },
        )?;
        prlimit(Some(pid), Resource::Fsize, both(0))?;
        prlimit(Some(pid), Resource::Core, both(0))?;
        prlimit(Some(pid), Resource::Nofile, both(32))?;
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn limit(&self, _pid: Option<u32>) -> std::io::Result<()> {
        Err(std::io::Error::other("worker limits need Linux"))
    }
}

/// Runs converters under the limits (see the module docs).
pub(crate) struct Conversions {
    isolation: Isolation,
    slots: Arc<Semaphore>,
    limit: Duration,
    max_output: u64,
}

impl Conversions {
    /// At most `concurrency` conversions at once, each within `limit` (waiting for a
    /// slot included), producing at most `max_output` bytes.
    pub(crate) fn new(
        isolation: Isolation,
        concurrency: usize,
        limit: Duration,
        max_output: u64,
    ) -> Self {
        Conversions {
            isolation,
            slots: Arc::new(Semaphore::new(concurrency.max(1))),
            limit,
            max_output,
        }
    }

    /// Converts `bytes` with `converter`; any failure is logged and yields `None`.
    pub(crate) async fn run(
        &self,
        converter: &Arc<dyn Converter>,
        bytes: &bytes::Bytes,
    ) -> Option<Converted> {
        let name = converter.name();
        let work = async {
            let slot = Arc::clone(&self.slots)
                .acquire_owned()
                .await
                .map_err(|e| e.to_string())?;
            match &self.isolation {
                Isolation::InProcess => {
                    in_process(Arc::clone(converter), bytes.clone(), slot).await
                }
                Isolation::Process(worker) => in_child(worker, name, bytes, self.max_output).await,
            }
        };
        match tokio::time::timeout(self.limit, work).await {
            Ok(Ok(converted)) => converted,
            Ok(Err(e)) => {
                tracing::info!(converter = %name, error = %e, "conversion failed; the alternative is omitted");
                None
            }
            Err(_) => {
                tracing::warn!(converter = %name, limit = ?self.limit, "a conversion took too long and was stopped; the alternative is omitted");
                None
            }
        }
    }
}

/// On a blocking thread, which keeps `slot` until it ends, even if abandoned.
async fn in_process(
    converter: Arc<dyn Converter>,
    bytes: bytes::Bytes,
    slot: tokio::sync::OwnedSemaphorePermit,
) -> Result<Option<Converted>, String> {
    let job = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        catch_unwind(AssertUnwindSafe(|| converter.convert(&bytes)))
    });
    match job.await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) | Err(_) => Err("the converter panicked".into()),
    }
}

/// In a child process: started, limited before it is given anything, fed, read (bounded)
/// and reaped. Dropping this future (time limit, cancelled request) kills the child.
async fn in_child(
    worker: &Worker,
    name: &str,
    input: &[u8],
    max_output: u64,
) -> Result<Option<Converted>, String> {
    let mut child = tokio::process::Command::new(&worker.program)
        .args(&worker.args)
        .arg(name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", worker.program.display()))?;
    if let Err(e) = worker.limit(child.id()) {
        let _ = child.start_kill();
        return Err(format!("cannot limit the worker: {e}"));
    }
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the worker's pipes are missing".into());
    };
    let feed = async move {
        // A worker that stops reading (it failed) closes the pipe: not an error here.
        let _ = stdin.write_all(input).await;
    };
    let (out, err, ()) = tokio::join!(
        read_bounded(stdout, max_output.saturating_add(256)),
        read_bounded(stderr, 4096),
        feed
    );
    let (out, out_complete) = out.map_err(|e| e.to_string())?;
    if !out_complete {
        let _ = child.start_kill();
        let _ = child.wait().await;
        return Err(format!("the worker wrote more than {max_output} bytes"));
    }
    let status = child.wait().await.map_err(|e| e.to_string())?;
    if !status.success() {
        let said = err.map(|(e, _)| String::from_utf8_lossy(&e).trim().to_owned());
        return Err(format!(
            "the worker {}{}",
            ended(status),
            said.map(|s| format!(": {s}")).unwrap_or_default()
        ));
    }
    parse_output(out)
}

/// How a worker that did not succeed ended.
fn ended(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(24)) => "was stopped by its CPU time limit (SIGXCPU)".into(),
        (None, Some(9)) => "was killed (SIGKILL: a limit, or out of memory)".into(),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => "ended abnormally".into(),
    }
}

/// Reads at most `max` bytes; `true` if that was the end.
async fn read_bounded(from: impl AsyncRead + Unpin, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut buf = Vec::new();
    let mut limited = from.take(max + 1);
    limited.read_to_end(&mut buf).await?;
    let complete = buf.len() as u64 <= max;
    Ok((buf, complete))
}

/// `MIME\nTEXT`, or nothing.
fn parse_output(out: Vec<u8>) -> Result<Option<Converted>, String> {
    if out.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8(out).map_err(|_| "the worker's output is not UTF-8".to_owned())?;
    let (mime, text) = text
        .split_once('\n')
        .ok_or_else(|| "the worker's output has no type line".to_owned())?;
    if mime.is_empty() || !mime.contains('/') {
        return Err(format!("the worker's output names no type: {mime:?}"));
    }
    Ok(Some(Converted {
        mime_type: mime.to_owned(),
        text: text.to_owned(),
    }))
}

/// The worker side of [`Isolation::Process`]: reads a file on stdin, converts it with
/// the converter of `converters` called `name`, writes the result on stdout (see
/// [`Worker`]) and returns the exit code. A binary serves conversions by calling this
/// when run as its worker (`rsrc` does so for `rsrc convert-worker NAME`).
pub fn convert_worker(converters: &[Arc<dyn Converter>], name: &str) -> ExitCode {
    let Some(converter) = converters.iter().find(|c| c.name() == name) else {
        eprintln!("no converter is called {name:?}");
        return ExitCode::from(2);
    };
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut input) {
        eprintln!("cannot read the input: {e}");
        return ExitCode::from(2);
    }
    match converter.convert(&input) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(c)) if c.mime_type.contains('\n') => {
            eprintln!("the converter named a type with a line break");
            ExitCode::FAILURE
        }
        Ok(Some(c)) => {
            let mut out = std::io::stdout().lock();
            let written = out
                .write_all(c.mime_type.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .and_then(|()| out.write_all(c.text.as_bytes()))
                .and_then(|()| out.flush());
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cannot write the output: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Extracts the text layer of PDF documents.
#[cfg(feature = "pdf")]
#[derive(Debug, Default, Clone, Copy)]
pub struct PdfText;

#[cfg(feature = "pdf")]
impl Converter for PdfText {
    fn name(&self) -> &str {
        "pdf-text"
    }

    fn accepts(&self, mime_type: &str) -> bool {
        mime_type == "application/pdf"
    }

    fn convert(&self, bytes: &[u8]) -> Result<Option<Converted>, String> {
        let text = pdf_extract::extract_text_from_mem(bytes).map_err(|e| e.to_string())?;
        let text = text.trim();
        Ok((!text.is_empty()).then(|| Converted {
            mime_type: "text/plain".into(),
            text: text.to_owned(),
        }))
    }
}

/// The converters used when none are configured.
pub fn default_converters() -> Vec<Arc<dyn Converter>> {
    #[cfg(feature = "pdf")]
    {
        vec![Arc::new(PdfText)]
    }
    #[cfg(not(feature = "pdf"))]
    {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker that is a shell script (`$1` is the converter's name).
    fn script(body: &str, memory: u64, cpu: u64) -> Isolation {
        let mut w = Worker::new("/bin/sh", ["-c", body, "worker"]);
        w.memory = memory;
        w.cpu = Duration::from_secs(cpu);
        Isolation::Process(w)
    }

    struct Named;

    impl Converter for Named {
        fn name(&self) -> &str {
            "named"
        }
        fn accepts(&self, _: &str) -> bool {
            true
        }
        fn convert(&self, _: &[u8]) -> Result<Option<Converted>, String> {
            Err("runs in the worker only".into())
        }
    }

    async fn convert(isolation: Isolation, limit: Duration) -> Option<Converted> {
        let c: Arc<dyn Converter> = Arc::new(Named);
        Conversions::new(isolation, 2, limit, 1024)
            .run(&c, &bytes::Bytes::from_static(b"input"))
            .await
    }

    #[tokio::test]
    async fn a_worker_gets_the_input_the_name_and_its_limits_before_it_runs() {
        let w = script(
            r#"read input; printf 'text/plain\n%s %s %s %s %s' "$input" "$1" "$(ulimit -v)" "$(ulimit -t)" "$(ulimit -f)""#,
            256 << 20,
            3,
        );
        let got = convert(w, Duration::from_secs(30)).await.unwrap();
        assert_eq!(got.mime_type, "text/plain");
        // ulimit -v counts KiB; no file may be written.
        assert_eq!(got.text, "input named 262144 3 0");
    }

    #[tokio::test]
    async fn a_worker_spinning_past_its_cpu_time_is_stopped_by_the_system() {
        let spin = script("cat >/dev/null; while :; do :; done", 1 << 30, 1);
        let err = in_child_of(spin, Duration::from_secs(120))
            .await
            .unwrap_err();
        assert!(
            err.contains("CPU time limit") || err.contains("SIGKILL"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_worker_that_outgrows_its_memory_fails_and_nothing_is_returned() {
        // The shell holds 64 MiB in a variable under a 32 MiB address-space limit.
        let body = "cat >/dev/null; x=$(head -c 67108864 /dev/zero | tr '\\0' a); printf 'text/plain\\n%s' \"${#x}\"";
        let err = in_child_of(script(body, 32 << 20, 10), Duration::from_secs(120))
            .await
            .unwrap_err();
        assert!(err.contains("the worker"), "{err}");
        // The same work within a limit that allows it succeeds: the limit made it fail.
        let roomy = in_child_of(script(body, 1 << 30, 10), Duration::from_secs(120)).await;
        assert_eq!(roomy.unwrap().unwrap().text, "67108864");
    }

    #[tokio::test]
    async fn a_worker_past_the_time_limit_is_killed_and_the_alternative_omitted() {
        let pids = tempfile::tempdir().unwrap();
        // No file may be written (RLIMIT_FSIZE 0): the pid is left as a directory's name.
        let body = format!("mkdir {}/$$; exec sleep 60", pids.path().display());
        assert_eq!(
            convert(script(&body, 1 << 30, 10), Duration::from_millis(500)).await,
            None
        );
        let pid = std::fs::read_dir(pids.path())
            .unwrap()
            .next()
            .expect("the worker started")
            .unwrap()
            .file_name()
            .into_string()
            .unwrap();
        // Killed on drop, then reaped in the background: gone within moments.
        let proc_dir = format!("/proc/{}", pid.trim());
        let mut gone = false;
        for _ in 0..200 {
            let state = std::fs::read_to_string(format!("{proc_dir}/stat")).unwrap_or_default();
            if state.is_empty() || state.contains(") Z ") {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(gone, "the worker {pid} still runs");
    }

    #[tokio::test]
    async fn a_worker_saying_too_much_or_nonsense_gives_no_alternative() {
        let chatty = script("cat >/dev/null; printf 'text/plain\\n'; yes", 1 << 30, 10);
        let err = in_child_of(chatty, Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(err.contains("more than 1024 bytes"), "{err}");
        let untyped = script("cat >/dev/null; printf 'no type line'", 1 << 30, 10);
        assert!(in_child_of(untyped, Duration::from_secs(60)).await.is_err());
        let nothing = script("cat >/dev/null", 1 << 30, 10);
        assert_eq!(
            in_child_of(nothing, Duration::from_secs(60)).await,
            Ok(None)
        );
    }

    #[tokio::test]
    async fn conversions_beyond_the_cap_wait_for_a_slot() {
        let dir = tempfile::tempdir().unwrap();
        let busy = dir.path().join("busy");
        let body = format!(
            "cat >/dev/null; if mkdir {0}; then sleep 0.3; rmdir {0}; printf 'text/plain\\nalone'; else printf 'text/plain\\noverlap'; fi",
            busy.display()
        );
        let c: Arc<dyn Converter> = Arc::new(Named);
        let one = Conversions::new(script(&body, 1 << 30, 10), 1, Duration::from_secs(30), 1024);
        let input = bytes::Bytes::from_static(b"x");
        let (a, b) = tokio::join!(one.run(&c, &input), one.run(&c, &input));
        assert_eq!(a.unwrap().text, "alone");
        assert_eq!(b.unwrap().text, "alone");
    }

    async fn in_child_of(
        isolation: Isolation,
        limit: Duration,
    ) -> Result<Option<Converted>, String> {
        let Isolation::Process(w) = isolation else {
            unreachable!()
        };
        tokio::time::timeout(limit, in_child(&w, "named", b"input", 1024))
            .await
            .expect("the worker ends by itself")
    }

    #[test]
    fn the_worker_side_reports_an_unknown_converter() {
        assert_eq!(convert_worker(&[], "missing"), ExitCode::from(2));
    }
}
