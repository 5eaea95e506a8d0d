//! The manual actions of a route's history (migration 0010): one row per
//! action, written by the transition it caused, read back oldest first.

use rusqlite::{params, Connection};

use crate::route::ActionRecord;
use crate::store::{from_json, parse_ts, to_json, ts, Store, StoreError};

/// A manual action as stored, with the route's generation after it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAction {
    pub generation: u32,
    pub record: ActionRecord,
}

pub(super) fn insert_action(
    conn: &Connection,
    route_id: u32,
    generation: u32,
    record: &ActionRecord,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO manual_actions (route_id, generation, action, actor, at, record_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        route_id,
        generation,
        record.action.as_str(),
        record.by.as_str(),
        ts(record.at),
        to_json(record)
    ])?;
    Ok(())
}

impl Store {
    /// The manual actions taken on route `route_id`, oldest first.
    pub fn manual_actions(&self, route_id: u32) -> Result<Vec<StoredAction>, StoreError> {
        let rows: Vec<(u32, String, String)> = self
            .conn()
            .prepare_cached(
                "SELECT generation, at, record_json FROM manual_actions WHERE route_id = ?1 \
                 ORDER BY id",
            )?
            .query_map([route_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(|(generation, at, json)| {
                let mut record: ActionRecord = from_json("manual action", &json)?;
                // The instant as the history's other rows store theirs
                // (milliseconds), so the action and the attempt it started
                // share one.
                record.at = parse_ts(&at)?;
                Ok(StoredAction { generation, record })
            })
            .collect()
    }
}
