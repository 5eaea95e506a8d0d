//! Read-only access to routes, for commands that only look (`recourse
//! routes`, `recourse route ID`): no engine tasks, no leases, nothing
//! written, so a read-only file or folder can be listed and another
//! process's write lock does not delay it.

use std::path::Path;

use super::views::{self, snapshot};
use super::{EngineError, RouteDetail, RoutePage, RouteQuery, RouteSnapshot};
use crate::store::{Store, StoreError};

/// A route whose stored row could not be read, named by its id.
#[derive(Debug, thiserror::Error)]
#[error("route {id} cannot be read: {error}")]
pub struct UnreadableRoute {
    pub id: u32,
    pub error: StoreError,
}

/// Routes of a database opened read-only.
pub struct RouteViewer {
    store: Store,
}

impl RouteViewer {
    /// Opens an existing database with [`Store::open_read_only`].
    pub fn open(path: &Path) -> Result<RouteViewer, EngineError> {
        Ok(RouteViewer {
            store: Store::open_read_only(path)?,
        })
    }

    /// Opens an existing database with [`Store::open_read_only_unchecked`]:
    /// for showing routes while an [`super::Engine::open`] of the same file
    /// is still checking it.
    pub fn open_unchecked(path: &Path) -> Result<RouteViewer, EngineError> {
        Ok(RouteViewer {
            store: Store::open_read_only_unchecked(path)?,
        })
    }

    /// One page of the route list, by the engine's own query.
    pub fn list_routes_page(&self, query: &RouteQuery) -> Result<RoutePage, EngineError> {
        views::route_page(&self.store, query)
    }

    /// Inbox items and past attempts a proposed catalogue rule is tried on.
    pub fn rule_samples(&self) -> Result<Vec<crate::catalogue::checks::Sample>, EngineError> {
        Ok(super::overlay::samples(&self.store)?)
    }

    /// Every profile, by name.
    pub fn list_profiles(&self) -> Result<Vec<crate::profile::Profile>, EngineError> {
        Ok(self.store.list_profiles()?)
    }

    /// Newest first; a route whose row cannot be read is an
    /// [`UnreadableRoute`] in its place, and the others are still shown.
    pub fn list_routes(&self) -> Result<Vec<Result<RouteSnapshot, UnreadableRoute>>, EngineError> {
        let rows = self.store.routes_each()?;
        let names = views::names_for(
            &self.store,
            rows.iter().filter_map(|(_, r)| r.as_ref().ok()),
        );
        Ok(rows
            .into_iter()
            .map(|(id, row)| {
                row.map(|r| snapshot(&r, &names))
                    .map_err(|error| UnreadableRoute { id, error })
            })
            .collect())
    }

    /// Ids of active routes whose owner is gone (its lease expired, or its
    /// process no longer exists): nothing runs their timers or attempts
    /// until `recourse recover` or the app adopts them.
    pub fn orphaned_ids(&self) -> Result<Vec<u32>, EngineError> {
        let now = chrono::Utc::now();
        Ok(self
            .store
            .active_owners(None)?
            .into_iter()
            .filter(|(_, owner, lease)| super::ownership::owner_gone(owner.as_deref(), *lease, now))
            .map(|(id, _, _)| id)
            .collect())
    }

    /// Every account, by the engine's own view.
    pub fn accounts(&self) -> Result<super::AccountsOverview, EngineError> {
        super::account_views::overview(&self.store, chrono::Utc::now())
    }

    /// One route with its attempts. A row that cannot be read is
    /// `EngineError::Store(StoreError::Malformed { .. })`.
    pub fn route_detail(&self, id: u32) -> Result<RouteDetail, EngineError> {
        views::route_detail(&self.store, id)
    }

    /// One attempt's stored transcript and changed files.
    pub fn attempt_transcript(
        &self,
        route_id: u32,
        attempt: u32,
    ) -> Result<super::AttemptTranscript, EngineError> {
        views::attempt_transcript(&self.store, route_id, attempt)
    }
}
