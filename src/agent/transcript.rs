//! What an agent said and did in one attempt, as its CLI reported it: the
//! assistant's text, each tool call with a short summary of its arguments
//! and how it ended (refused included), the final answer, token usage and
//! cost, the model and the CLI's session id.
//!
//! Built by the kind's adapter while the stream is read, bounded as it
//! grows (an agent may print gigabytes): the first and the last parts are
//! kept and the middle is counted, never kept. Sanitizing happens before it
//! is stored ([`Transcript::sanitized`]). It informs people and
//! continuation; it never relaxes the safety gate.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of entries kept from the start of an attempt, then from its end.
const HEAD_BYTES: usize = 96 * 1024;
const TAIL_BYTES: usize = 96 * 1024;
/// Longest text one entry keeps (the middle of a longer one is cut).
const ENTRY_BYTES: usize = 16 * 1024;
/// Longest tool-argument summary.
const SUMMARY_CHARS: usize = 120;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Transcript {
    /// The CLI's own session id (Claude `session_id`, Codex `thread_id`,
    /// Gemini `session_id`, OpenCode `sessionID`).
    pub session_id: Option<String>,
    pub model: Option<String>,
    pub entries: Vec<Entry>,
    /// The agent's final answer, when it gave one.
    pub answer: Option<String>,
    pub usage: Option<Usage>,
    /// Entries and bytes left out of the middle to stay within the bound.
    pub elided: Elided,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// Text the model wrote.
    Assistant { text: String },
    /// A tool call: its id in the CLI's stream, its name, a short summary
    /// of its arguments, and how it ended.
    Tool {
        id: String,
        name: String,
        summary: String,
        status: ToolStatus,
        /// Why it failed or was refused, as the CLI said.
        detail: Option<String>,
    },
    /// Output of a command that is not an agent CLI (its stdout and stderr).
    Output { stream: String, text: String },
    /// Where entries were left out to keep the transcript bounded.
    Elided { entries: u32, bytes: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Started,
    Completed,
    Failed,
    /// Not run: the access level or the CLI's permissions refused it.
    Refused,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Usage {
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_read_tokens: u32,
    pub cache_write_tokens: u32,
    /// In US dollars, where the CLI reports it.
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Elided {
    pub entries: u32,
    pub bytes: u32,
}

impl Usage {
    /// This and `other` together (OpenCode reports each step's).
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_add(other.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(other.cache_write_tokens),
            cost_usd: match (self.cost_usd, other.cost_usd) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            },
        }
    }
}

impl Entry {
    fn bytes(&self) -> usize {
        match self {
            Entry::Assistant { text } => text.len(),
            Entry::Tool {
                id,
                name,
                summary,
                detail,
                ..
            } => id.len() + name.len() + summary.len() + detail.as_ref().map_or(0, String::len),
            Entry::Output { text, .. } => text.len(),
            Entry::Elided { .. } => 0,
        }
    }
}

impl Transcript {
    /// Text the model wrote; a piece that continues the last text is joined
    /// to it (Gemini streams an answer in `delta` pieces).
    pub fn say(&mut self, text: &str, continues: bool) {
        if text.is_empty() {
            return;
        }
        if continues {
            if let Some(Entry::Assistant { text: last }) = self.entries.last_mut() {
                if last.len() < ENTRY_BYTES {
                    last.push_str(text);
                    return;
                }
            }
        }
        self.push(Entry::Assistant {
            text: cut(text, ENTRY_BYTES),
        });
    }

    /// A tool call began (or, for a CLI that reports only its end, was seen).
    pub fn tool(&mut self, id: &str, name: &str, input: Option<&Value>, status: ToolStatus) {
        if let Some(Entry::Tool { status: s, .. }) = self.tool_mut(id) {
            *s = status;
            return;
        }
        self.push(Entry::Tool {
            id: cut(id, 200),
            name: cut(name, 200),
            summary: input.map(summary).unwrap_or_default(),
            status,
            detail: None,
        });
    }

    /// How tool call `id` ended; a call this transcript never saw starting
    /// (or left out of the middle) is added when it was refused, so a
    /// refusal is never lost.
    pub fn tool_ended(&mut self, id: &str, name: &str, status: ToolStatus, detail: Option<&str>) {
        let detail = detail.map(|d| cut(d, 1024));
        match self.tool_mut(id) {
            Some(Entry::Tool {
                status: s,
                detail: d,
                ..
            }) => {
                // A refusal is the last word, whatever is reported after it.
                if *s != ToolStatus::Refused {
                    *s = status;
                }
                if detail.is_some() {
                    *d = detail;
                }
            }
            _ if status == ToolStatus::Refused => self.push(Entry::Tool {
                id: cut(id, 200),
                name: cut(name, 200),
                summary: String::new(),
                status,
                detail,
            }),
            _ => {}
        }
    }

    pub fn output(&mut self, stream: &str, text: &str) {
        self.push(Entry::Output {
            stream: stream.to_string(),
            text: cut(text, ENTRY_BYTES),
        });
    }

    pub fn answer(&mut self, text: &str) {
        self.answer = Some(cut(text, 64 * 1024));
    }

    pub fn session(&mut self, id: &str) {
        if self.session_id.is_none() && !id.is_empty() {
            self.session_id = Some(cut(id, 200));
        }
    }

    pub fn model(&mut self, model: &str) {
        if self.model.is_none() && !model.is_empty() && !model.starts_with('<') {
            self.model = Some(cut(model, 200));
        }
    }

    pub fn add_usage(&mut self, usage: Usage) {
        self.usage = Some(self.usage.unwrap_or_default().plus(usage));
    }

    /// The names of refused tool calls, in order.
    pub fn refused(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool {
                    name,
                    status: ToolStatus::Refused,
                    ..
                } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// The text the assistant wrote after its last tool call: the answer of
    /// a CLI that prints none of its own.
    pub fn text_after_last_tool(&self) -> Option<String> {
        let mut text = String::new();
        for e in self.entries.iter().rev() {
            match e {
                Entry::Assistant { text: t } => text.insert_str(0, t),
                Entry::Tool { .. } => break,
                Entry::Output { .. } | Entry::Elided { .. } => {}
            }
        }
        (!text.trim().is_empty()).then_some(text)
    }

    /// Every text made safe to store and show: terminal escapes stripped
    /// and secrets redacted by the evidence sanitizer.
    pub fn sanitized(mut self) -> Transcript {
        let clean = |s: &mut String| {
            *s = crate::evidence::sanitize(&crate::evidence::strip_terminal_escapes(s));
        };
        for e in &mut self.entries {
            match e {
                Entry::Assistant { text } | Entry::Output { text, .. } => clean(text),
                Entry::Tool {
                    summary, detail, ..
                } => {
                    clean(summary);
                    if let Some(d) = detail {
                        clean(d);
                    }
                }
                Entry::Elided { .. } => {}
            }
        }
        if let Some(a) = &mut self.answer {
            clean(a);
        }
        self
    }

    fn tool_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .rev()
            .find(|e| matches!(e, Entry::Tool { id: i, .. } if i == id))
    }

    /// Adds an entry; past the head's budget, entries are kept from the end
    /// and what falls out of the middle is counted.
    fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
        let total: usize = self.entries.iter().map(Entry::bytes).sum();
        if total <= HEAD_BYTES + TAIL_BYTES {
            return;
        }
        // The head: entries from the start up to its budget.
        let mut head = 0;
        let mut head_bytes = 0;
        while head < self.entries.len() {
            let b = self.entries[head].bytes();
            if head_bytes + b > HEAD_BYTES || matches!(self.entries[head], Entry::Elided { .. }) {
                break;
            }
            head_bytes += b;
            head += 1;
        }
        // Drop from just after the head until the rest fits the tail.
        let mut rest: usize = self.entries[head..].iter().map(Entry::bytes).sum();
        let mut dropped = 0u32;
        let mut dropped_bytes = 0usize;
        let mut at = head;
        while rest > TAIL_BYTES && at < self.entries.len() - 1 {
            match self.entries.remove(at) {
                Entry::Elided { entries, bytes } => {
                    dropped += entries;
                    dropped_bytes += bytes as usize;
                }
                e => {
                    let b = e.bytes();
                    rest -= b;
                    dropped += 1;
                    dropped_bytes += b;
                }
            }
            at = head;
        }
        let dropped_bytes = u32::try_from(dropped_bytes).unwrap_or(u32::MAX);
        self.entries.insert(
            head,
            Entry::Elided {
                entries: dropped,
                bytes: dropped_bytes,
            },
        );
        self.elided.entries = self.elided.entries.saturating_add(dropped);
        self.elided.bytes = self.elided.bytes.saturating_add(dropped_bytes);
    }
}

/// A tool's arguments in a few words: its command, file, path, pattern or
/// query when it has one, else the arguments as compact JSON, cut short.
pub fn summary(input: &Value) -> String {
    const KEYS: [&str; 10] = [
        "command",
        "cmd",
        "file_path",
        "filePath",
        "path",
        "dir_path",
        "pattern",
        "url",
        "query",
        "description",
    ];
    let text = KEYS
        .iter()
        .find_map(|k| input.get(k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| match input {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= SUMMARY_CHARS {
        one_line
    } else {
        let cut: String = one_line.chars().take(SUMMARY_CHARS).collect();
        format!("{cut}…")
    }
}

/// `text` at most `max` bytes: the middle of a longer one is replaced by a
/// marker that says how much, cut at UTF-8 boundaries.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let keep = max / 2;
    let mut head = keep;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - keep;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes left out …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// The files an attempt changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FilesChanged {
    /// The working directory, as the attempt ran in it.
    pub dir: String,
    pub files: Vec<FileChange>,
    /// Changed files beyond those listed.
    pub more: u32,
    /// `git diff --stat` after the attempt, cut short.
    pub diff_stat: String,
}

impl FilesChanged {
    /// How many files changed, those beyond the list included.
    pub fn count(&self) -> u32 {
        u32::try_from(self.files.len())
            .unwrap_or(u32::MAX)
            .saturating_add(self.more)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FileChange {
    pub path: String,
    /// Its `git status --porcelain` code after the attempt (`M`, `??`,
    /// `D`, …); empty when the attempt left it as git has it committed.
    pub status: String,
}

/// An attempt's transcript as the attempt list shows it, without its
/// entries: read from the summary columns the store keeps beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TranscriptSummary {
    pub session_id: Option<String>,
    /// The answer's first 300 bytes.
    pub answer_excerpt: Option<String>,
    pub tool_calls: u32,
    /// Names of the tool calls the access level or the CLI refused.
    pub refused: Vec<String>,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cost_usd: Option<f64>,
    /// How many files of the working directory changed (`None`: not a git
    /// repository).
    pub files_changed: Option<u32>,
}

impl TranscriptSummary {
    pub fn of(t: &Transcript, files: Option<&FilesChanged>) -> TranscriptSummary {
        let usage = t.usage.unwrap_or_default();
        TranscriptSummary {
            session_id: t.session_id.clone(),
            answer_excerpt: t.answer.as_deref().map(crate::route::machine::excerpt),
            tool_calls: u32::try_from(
                t.entries
                    .iter()
                    .filter(|e| matches!(e, Entry::Tool { .. }))
                    .count(),
            )
            .unwrap_or(u32::MAX),
            refused: t.refused(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cost_usd: usage.cost_usd,
            files_changed: files.map(FilesChanged::count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_call_is_summarised_by_its_command_or_file() {
        assert_eq!(
            summary(&json!({"command": "echo  hi\nthere", "description": "x"})),
            "echo hi there"
        );
        assert_eq!(
            summary(&json!({"file_path": "src/a.rs", "content": "…"})),
            "src/a.rs"
        );
        assert_eq!(summary(&json!({"n": 1})), r#"{"n":1}"#);
        assert!(summary(&json!({"command": "x".repeat(500)})).ends_with('…'));
    }

    #[test]
    fn a_refusal_reported_after_the_call_wins_and_one_never_seen_is_added() {
        let mut t = Transcript::default();
        t.tool(
            "t1",
            "Write",
            Some(&json!({"file_path": "a"})),
            ToolStatus::Started,
        );
        t.tool_ended("t1", "Write", ToolStatus::Refused, Some("plan mode"));
        t.tool_ended("t1", "Write", ToolStatus::Failed, None);
        t.tool_ended("t2", "Bash", ToolStatus::Refused, None);
        t.tool_ended("t3", "Read", ToolStatus::Completed, None);
        assert_eq!(t.refused(), ["Write", "Bash"]);
        assert_eq!(
            t.entries.len(),
            2,
            "a completion of an unseen call adds nothing"
        );
    }

    #[test]
    fn a_transcript_stays_bounded_keeping_its_start_and_its_end() {
        let mut t = Transcript::default();
        t.say("the plan", false);
        for i in 0..20_000 {
            t.tool(
                &format!("t{i}"),
                "Bash",
                Some(&json!({"command": "x".repeat(100)})),
                ToolStatus::Completed,
            );
        }
        t.say("the end", false);
        let bytes: usize = t.entries.iter().map(Entry::bytes).sum();
        assert!(bytes <= HEAD_BYTES + TAIL_BYTES, "{bytes} bytes kept");
        assert_eq!(
            t.entries[0],
            Entry::Assistant {
                text: "the plan".into()
            }
        );
        assert_eq!(
            t.entries.last(),
            Some(&Entry::Assistant {
                text: "the end".into()
            })
        );
        let marks = t
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Elided { .. }))
            .count();
        assert_eq!(marks, 1, "one marker where the middle went");
        assert!(t.elided.entries > 10_000, "{:?}", t.elided);
    }

    #[test]
    fn a_long_text_keeps_its_ends_and_says_how_much_went() {
        let text = format!("{}{}", "é".repeat(20_000), "end");
        let kept = cut(&text, 1000);
        assert!(kept.len() < 1100);
        assert!(kept.ends_with("end"));
        assert!(kept.contains("bytes left out"));
    }

    #[test]
    fn deltas_join_the_text_they_continue() {
        let mut t = Transcript::default();
        t.say("Do", true);
        t.say("ne.", true);
        t.say("Next", false);
        assert_eq!(t.entries.len(), 2);
        assert_eq!(t.text_after_last_tool().as_deref(), Some("Done.Next"));
    }
}
