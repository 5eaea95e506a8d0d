//! The candidates as saved now, each read once however many routes of a
//! burst run it: their policies plan the burst's transitions, and their
//! variables' values go to its dispatches. Nothing writes candidates
//! inside a burst's transaction, so what was read at its start holds for
//! all of it. A single transition uses a fresh one, reading as it always did.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::profile::Candidate;
use crate::route::{machine, RouteRow};
use crate::store::{Store, StoreError};

/// Candidates by id, as read (`None`: no longer saved).
#[derive(Default)]
pub(super) struct Saved(RefCell<BTreeMap<u32, Option<Candidate>>>);

impl Saved {
    /// Those of `ids` still saved, read from `store` unless read already.
    fn read(&self, store: &Store, ids: &[u32]) -> Result<Vec<Candidate>, StoreError> {
        let unread: Vec<u32> = {
            let known = self.0.borrow();
            ids.iter()
                .copied()
                .filter(|id| !known.contains_key(id))
                .collect()
        };
        if !unread.is_empty() {
            let found = store.candidates_by_id(&unread)?;
            let mut known = self.0.borrow_mut();
            for id in unread {
                known.insert(id, found.iter().find(|c| c.id == id).cloned());
            }
        }
        let known = self.0.borrow();
        Ok(ids
            .iter()
            .filter_map(|id| known.get(id).cloned().flatten())
            .collect())
    }

    /// Candidate `id` as saved, if it still is.
    pub(super) fn candidate(
        &self,
        store: &Store,
        id: u32,
    ) -> Result<Option<Candidate>, StoreError> {
        Ok(self.read(store, &[id])?.pop())
    }

    /// `row` with its candidates' policies as saved (see
    /// [`machine::with_policies`]).
    pub(super) fn policies(&self, store: &Store, row: RouteRow) -> Result<RouteRow, StoreError> {
        let ids: Vec<u32> = row.candidates.iter().map(|c| c.id).collect();
        Ok(machine::with_policies(row, &self.read(store, &ids)?))
    }
}
