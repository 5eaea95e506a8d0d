//! The agent's output streams, read within fixed bounds: stdout as lines of
//! at most [`MAX_LINE`] bytes (the rest of a longer line is drained, never
//! kept), stderr as its last [`STDERR_TAIL`] bytes cut at a line boundary.
//!
//! An agent can print without end (a 1 GB answer on one line, a log loop on
//! stderr); what Recourse keeps of it must not grow with it.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::mpsc;

/// Bytes of stderr kept (the tail).
pub(super) const STDERR_TAIL: usize = 8192;
/// Bytes of one stdout line kept; the rest of the line is dropped.
pub const MAX_LINE: usize = 1 << 20;

pub(super) enum Output {
    Line { bytes: Vec<u8>, oversized: bool },
    Stderr(Vec<u8>),
}

/// Builds stdout lines from the chunks a reader hands out, keeping at most
/// [`MAX_LINE`] bytes of each. Pure, so its bound is tested without a pipe.
#[derive(Default)]
struct LineAssembler {
    line: Vec<u8>,
    oversized: bool,
}

impl LineAssembler {
    /// Takes `buf` up to and including its first newline. Returns how many
    /// bytes were consumed and, when a newline ended a line, that line
    /// (bounded) and whether bytes of it were dropped.
    fn feed(&mut self, buf: &[u8]) -> (usize, Option<(Vec<u8>, bool)>) {
        let (chunk, complete) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.oversized |= chunk.len() > room;
        self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let done = complete.then(|| self.take());
        (chunk.len(), done)
    }

    /// The line so far (the last one, at end of stream).
    fn take(&mut self) -> (Vec<u8>, bool) {
        let oversized = std::mem::take(&mut self.oversized);
        (std::mem::take(&mut self.line), oversized)
    }

    /// Memory held for the line being read.
    #[cfg(test)]
    fn retained(&self) -> usize {
        self.line.capacity()
    }
}

pub(super) async fn read_lines(out: impl AsyncRead + Unpin, tx: mpsc::Sender<Output>) {
    let mut reader = BufReader::with_capacity(64 * 1024, out);
    let mut lines = LineAssembler::default();
    loop {
        let (consumed, done) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => lines.feed(buf),
        };
        reader.consume(consumed);
        if let Some((bytes, oversized)) = done {
            if tx.send(Output::Line { bytes, oversized }).await.is_err() {
                return;
            }
        }
    }
    let (bytes, oversized) = lines.take();
    if !bytes.is_empty() {
        let _ = tx.send(Output::Line { bytes, oversized }).await;
    }
}

pub(super) async fn read_chunks(mut err: impl AsyncRead + Unpin, tx: mpsc::Sender<Output>) {
    let mut buf = vec![0u8; 4096];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 || tx.send(Output::Stderr(buf[..n].to_vec())).await.is_err() {
            break;
        }
    }
}

/// The last [`STDERR_TAIL`] bytes. The cut is not sanitized around: when
/// bytes were dropped, the partial first line goes too, so no fragment of a
/// secret cut in two is kept (a sanitizer could not recognise a key whose
/// prefix is gone). Secrets spanning lines (a PEM block) are left to the
/// sanitizer, which redacts what is left of one at a cut.
#[derive(Default)]
pub(super) struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    pub(super) fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > STDERR_TAIL {
            self.bytes.drain(..self.bytes.len() - STDERR_TAIL);
            self.cut = true;
        }
    }

    /// Anything but whitespace arrived.
    pub(super) fn any_output(&self) -> bool {
        self.cut || self.bytes.iter().any(|b| !b.is_ascii_whitespace())
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        if self.cut {
            match self.bytes.iter().position(|&b| b == b'\n') {
                Some(i) => drop(self.bytes.drain(..=i)),
                None => self.bytes.clear(),
            }
        }
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    use tokio::io::ReadBuf;

    const GIB: u64 = 1 << 30;
    const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";

    /// `len` bytes of `x` with no newline, made up as they are read: the
    /// test itself never holds more than one read's worth.
    struct Endless {
        left: u64,
        read: Arc<AtomicU64>,
    }

    impl AsyncRead for Endless {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = (buf.remaining() as u64).min(self.left).min(XS.len() as u64) as usize;
            buf.put_slice(&XS[..n]);
            self.left -= n as u64;
            self.read.fetch_add(n as u64, Ordering::Relaxed);
            Poll::Ready(Ok(()))
        }
    }

    static XS: [u8; 64 * 1024] = [b'x'; 64 * 1024];

    #[test]
    fn a_gibibyte_without_newline_never_grows_the_line_past_its_bound() {
        let mut lines = LineAssembler::default();
        let mut fed = 0u64;
        let mut peak = 0;
        while fed < GIB {
            let (consumed, done) = lines.feed(&XS);
            assert!(done.is_none(), "no newline, no line");
            fed += consumed as u64;
            peak = peak.max(lines.retained());
            assert!(
                lines.retained() <= 2 * MAX_LINE,
                "after {fed} bytes the line holds {} bytes: it must stay near MAX_LINE",
                lines.retained()
            );
        }
        assert!(peak >= MAX_LINE, "the head of the line is kept");
        let (line, oversized) = lines.take();
        assert_eq!(line.len(), MAX_LINE);
        assert!(oversized, "the adapter is told the line was cut");
    }

    #[tokio::test]
    async fn a_gibibyte_line_from_a_reader_is_drained_to_the_end_as_one_bounded_line() {
        let read = Arc::new(AtomicU64::new(0));
        let source = Endless {
            left: GIB,
            read: read.clone(),
        };
        let (tx, mut rx) = mpsc::channel(16);
        let reader = tokio::spawn(read_lines(source, tx));
        let mut lines = Vec::new();
        while let Some(out) = rx.recv().await {
            match out {
                Output::Line { bytes, oversized } => {
                    lines.push((bytes.len(), bytes.capacity(), oversized))
                }
                Output::Stderr(_) => unreachable!("only stdout is read here"),
            }
        }
        reader.await.unwrap();
        assert_eq!(
            read.load(Ordering::Relaxed),
            GIB,
            "read to the end: a writer is never left blocked on a full pipe"
        );
        assert_eq!(lines.len(), 1, "one line, however long");
        let (len, capacity, oversized) = lines[0];
        assert_eq!(len, MAX_LINE);
        assert!(capacity <= 2 * MAX_LINE, "held {capacity} bytes for it");
        assert!(oversized);
    }

    #[test]
    fn lines_after_an_oversized_one_are_whole_and_not_marked() {
        let mut lines = LineAssembler::default();
        let mut input = vec![b'a'; MAX_LINE + 10];
        input.extend_from_slice(b"\nnext\n");
        let mut rest = &input[..];
        let mut out = Vec::new();
        while !rest.is_empty() {
            let (n, done) = lines.feed(rest);
            out.extend(done);
            rest = &rest[n..];
        }
        assert_eq!(out.len(), 2);
        assert!(out[0].1 && out[0].0.len() == MAX_LINE);
        assert_eq!(out[1], (b"next\n".to_vec(), false));
    }

    #[test]
    fn a_secret_cut_by_the_stderr_tail_leaves_no_fragment() {
        let tail_line = "retrying the request after a network error\n";
        for cut_into_key in [1, 7, 20, KEY.len() - 8, KEY.len() - 1] {
            for chunk in [1, 100, 4096, 1 << 16] {
                // After the key's line, exactly enough to fill the tail up
                // to `cut_into_key` bytes into the key.
                let keep_after = STDERR_TAIL - (KEY.len() - cut_into_key) - 1;
                let n = (keep_after - 1) / tail_line.len();
                let mut text = "x".repeat(40).into_bytes();
                text.extend_from_slice(b"\nexport ANTHROPIC_API_KEY=");
                let key_at = text.len();
                text.extend_from_slice(KEY.as_bytes());
                text.push(b'\n');
                text.extend(std::iter::repeat_n(
                    b'-',
                    keep_after - 1 - n * tail_line.len(),
                ));
                text.push(b'\n');
                text.extend_from_slice(tail_line.repeat(n).as_bytes());
                assert_eq!(
                    text.len() - STDERR_TAIL,
                    key_at + cut_into_key,
                    "the cut is inside the key"
                );
                let mut tail = Tail::default();
                for piece in text.chunks(chunk) {
                    tail.push(piece);
                }
                let kept = String::from_utf8(tail.finish()).unwrap();
                for window in KEY.as_bytes().windows(6) {
                    let window = std::str::from_utf8(window).unwrap();
                    assert!(
                        !kept.contains(window),
                        "cut {cut_into_key} bytes into the key, chunks of {chunk}: fragment {window:?} kept"
                    );
                }
                assert!(
                    kept.ends_with(tail_line),
                    "the lines after the cut are kept"
                );
            }
        }
    }
}
