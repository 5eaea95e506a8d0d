//! Each attempt's transcript and the files it changed, written once when
//! the attempt ends, in their own table (migration 0007): the route list
//! never reads them, a route's detail reads the summary columns, one
//! attempt's page the whole transcript.

use rusqlite::{params, OptionalExtension};

use super::opt_json;
use crate::agent::{FilesChanged, Transcript, TranscriptSummary};
use crate::store::{from_json, to_json, Store, StoreError};

impl Store {
    /// Keeps attempt `number`'s transcript (already sanitized and bounded)
    /// and changed files; a second write of the same attempt is ignored.
    pub fn save_transcript(
        &self,
        route_id: u32,
        number: u32,
        transcript: &Transcript,
        files: Option<&FilesChanged>,
    ) -> Result<(), StoreError> {
        let s = TranscriptSummary::of(transcript, files);
        self.conn()
            .prepare_cached(
                "INSERT OR IGNORE INTO attempt_transcripts (attempt_id, transcript_json, \
                 files_json, session_id, answer_excerpt, tool_calls, refused_json, input_tokens, \
                 output_tokens, cost_usd, files_changed) \
                 SELECT id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12 \
                 FROM attempts WHERE route_id = ?1 AND number = ?2",
            )?
            .execute(params![
                route_id,
                number,
                to_json(transcript),
                files.map(to_json),
                s.session_id,
                s.answer_excerpt,
                s.tool_calls,
                to_json(&s.refused),
                s.input_tokens,
                s.output_tokens,
                s.cost_usd,
                s.files_changed
            ])?;
        Ok(())
    }

    /// Attempt `number`'s whole transcript and changed files.
    pub fn transcript(
        &self,
        route_id: u32,
        number: u32,
    ) -> Result<Option<(Transcript, Option<FilesChanged>)>, StoreError> {
        let row = self
            .conn()
            .prepare_cached(
                "SELECT t.transcript_json, t.files_json FROM attempt_transcripts t \
                 JOIN attempts a ON a.id = t.attempt_id WHERE a.route_id = ?1 AND a.number = ?2",
            )?
            .query_row(params![route_id, number], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .optional()?;
        row.map(|(t, f)| Ok((from_json("transcript", &t)?, opt_json("changed files", f)?)))
            .transpose()
    }

    /// The summary of every attempt of the route that kept a transcript,
    /// by attempt number, from the summary columns only.
    pub fn transcript_summaries(
        &self,
        route_id: u32,
    ) -> Result<Vec<(u32, TranscriptSummary)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT a.number, t.session_id, t.answer_excerpt, t.tool_calls, t.refused_json, \
             t.input_tokens, t.output_tokens, t.cost_usd, t.files_changed \
             FROM attempt_transcripts t JOIN attempts a ON a.id = t.attempt_id \
             WHERE a.route_id = ?1 ORDER BY a.number",
        )?;
        let rows = stmt
            .query_map([route_id], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    TranscriptSummary {
                        session_id: r.get(1)?,
                        answer_excerpt: r.get(2)?,
                        tool_calls: r.get(3)?,
                        refused: Vec::new(),
                        input_tokens: r.get(5)?,
                        output_tokens: r.get(6)?,
                        cost_usd: r.get(7)?,
                        files_changed: r.get(8)?,
                    },
                    r.get::<_, String>(4)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(n, mut s, refused)| {
                s.refused = from_json("refused tools", &refused)?;
                Ok((n, s))
            })
            .collect()
    }
}
