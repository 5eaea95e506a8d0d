//! Route events: each committed transition told to the engine's
//! subscribers with the route as the UI sees it. A burst's routes are told
//! together, the accounts' names their snapshots speak of read once for all
//! of them rather than once a route.

use super::views::{names_for, snapshot};
use super::{Engine, RouteEvent};
use crate::route::RouteRow;

impl Engine {
    /// Publishes one transition's event (see [`Engine::publish_all`]).
    pub(super) fn publish(&self, row: &RouteRow) {
        self.publish_all(std::slice::from_ref(row));
    }

    /// Publishes an event for each of `rows`, in their order, their
    /// accounts' names read once (see [`names_for`]).
    pub(super) fn publish_all(&self, rows: &[RouteRow]) {
        {
            let mut book = self.book();
            for row in rows {
                book.published.insert(row.id, row.generation);
                if row.archived_at.is_some() {
                    book.archived.insert(row.id);
                } else {
                    book.archived.remove(&row.id);
                }
            }
        }
        let names = names_for(&self.store(), rows);
        for row in rows {
            // No subscriber is fine: nobody is watching.
            let _ = self.inner.events.send(RouteEvent {
                route_id: row.id,
                generation: row.generation,
                snapshot: snapshot(row, &names),
            });
        }
    }
}
