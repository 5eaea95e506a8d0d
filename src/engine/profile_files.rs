//! Profiles as documents: export, what an import would change, the import
//! itself, and duplicating a profile. Each write is one transaction under
//! the profile's revision guard, so an edit made meanwhile in the app or
//! another command is refused, never overwritten.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::profiles::{name_taken, refused, validate_candidates};
use super::{Engine, EngineError};
use crate::profile::diff::{changes, ProfileChange};
use crate::profile::document::{self, LoadedProfile, ProfileDocument, MAX_DOCUMENT_BYTES};
use crate::profile::Profile;

/// What importing a document would do.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ImportPreview {
    /// The document's profile name.
    pub name: String,
    /// The stored profile of that name, which `--replace` would change.
    pub existing: Option<ExistingProfile>,
    /// Empty when the document equals the stored profile; for a new
    /// profile, one `candidate … added` line per candidate.
    pub changes: Vec<ProfileChange>,
    /// True when the document used the old generic action maps and was
    /// normalized.
    pub legacy: bool,
    /// The normalized document as it would be saved.
    pub document_json: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ExistingProfile {
    pub id: u32,
    /// Send it back with [`ImportTarget::Replace`].
    pub revision: u32,
}

/// Where an imported document goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportTarget {
    /// A new profile; a name already taken is refused.
    New,
    /// Replace profile `id` (name and candidates) if it is still at
    /// `expected_revision`.
    Replace { id: u32, expected_revision: u32 },
}

/// The text of a profile document file, refusing one over 1 MiB without
/// reading past it, and the database at `database` itself. The error is at
/// field `file`, naming the path.
pub fn read_document_file(path: &Path, database: &Path) -> Result<String, EngineError> {
    let refuse = |why: String| {
        EngineError::validation("file", format!("cannot read {}: {why}", path.display()))
    };
    if is_database(path, database) {
        return Err(refuse(NOT_A_DOCUMENT.into()));
    }
    let file = std::fs::File::open(path).map_err(|e| refuse(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(e.to_string()))?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(refuse("larger than 1 MiB; refusing to read it".into()));
    }
    String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text".into()))
}

/// Writes `text` 0600 through a temporary file in the same folder and a
/// rename, so a crash never leaves half a document where the old one was;
/// never over the database at `database`.
pub fn write_document_file(path: &Path, database: &Path, text: &str) -> Result<(), EngineError> {
    let refuse = |why: String| {
        EngineError::validation("file", format!("cannot write {}: {why}", path.display()))
    };
    if is_database(path, database) {
        return Err(refuse(NOT_A_DOCUMENT.into()));
    }
    crate::store::files::write_private(path, text.as_bytes()).map_err(|e| refuse(e.to_string()))
}

const NOT_A_DOCUMENT: &str = "it is Recourse's own database, not a profile document";

/// Whether `path` is the database at `database` or one of its journal
/// files. Reading one would close a descriptor of it, which drops every
/// lock this process's SQLite holds there (the next process to close its
/// connection would then delete the journal under this one); writing one
/// would replace the database. Compared by file identity, so another name
/// for the same file is caught too.
fn is_database(path: &Path, database: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(target) = std::fs::metadata(path) else {
        return false;
    };
    ["", "-wal", "-shm", "-journal"].iter().any(|suffix| {
        let mut own = database.as_os_str().to_owned();
        own.push(suffix);
        std::fs::metadata(own).is_ok_and(|m| (m.dev(), m.ino()) == (target.dev(), target.ino()))
    })
}

/// Reads a profile document; every problem is a field error with its path.
pub fn read_document(text: &str) -> Result<LoadedProfile, EngineError> {
    document::load(text).map_err(|e| EngineError::Validation(e.errors()))
}

/// What importing a document already read would change, compared with
/// `stored` (the profile of the same name, if there is one).
pub fn preview_import(loaded: &LoadedProfile, stored: Option<&Profile>) -> ImportPreview {
    let incoming = &loaded.document;
    let current = stored.map(ProfileDocument::from_profile);
    // Compared as it would be saved: a value left out is the stored one.
    let kept = incoming.with_kept_secrets(stored);
    let empty = ProfileDocument {
        candidates: Vec::new(),
        ..incoming.clone()
    };
    ImportPreview {
        name: incoming.name.clone(),
        existing: stored.map(|p| ExistingProfile {
            id: p.id,
            revision: p.revision,
        }),
        changes: changes(current.as_ref().unwrap_or(&empty), &kept),
        legacy: loaded.source == crate::policy::DocumentSource::Legacy,
        document_json: incoming.to_json_pretty(),
    }
}

impl Engine {
    /// The document of profile `id`, without its secret values (see
    /// [`ProfileDocument::without_secrets`]).
    pub fn export_profile(&self, id: u32) -> Result<ProfileDocument, EngineError> {
        Ok(ProfileDocument::from_profile(&self.get_profile(id)?).without_secrets())
    }

    /// What importing `text` would change; nothing is written.
    pub fn preview_import(&self, text: &str) -> Result<ImportPreview, EngineError> {
        self.preview_loaded(&read_document(text)?)
    }

    /// [`Engine::preview_import`] for a document already read.
    pub fn preview_loaded(&self, loaded: &LoadedProfile) -> Result<ImportPreview, EngineError> {
        let stored = self.store().profile_by_name(&loaded.document.name)?;
        Ok(preview_import(loaded, stored.as_ref()))
    }

    /// Saves a document as a new profile or over an existing one. The
    /// document is validated again here, whoever built it.
    pub fn import_profile(
        &self,
        doc: &ProfileDocument,
        target: ImportTarget,
    ) -> Result<Profile, EngineError> {
        let except = match target {
            ImportTarget::New => None,
            ImportTarget::Replace { id, .. } => Some(id),
        };
        let name = self.distinct_name(&doc.name, except)?;
        let now = self.inner.clock.now();
        match target {
            ImportTarget::New => {
                let mut inputs = doc.to_inputs(None);
                validate_candidates(&inputs)?;
                let accounts = self.accounts_of(&inputs)?;
                let stowed = self.stow_secrets(&name, &mut inputs, None)?;
                let writes = super::profiles::with_accounts(&inputs, accounts);
                let created = self
                    .store()
                    .create_profile_with_candidates(&name, &writes, now)
                    .map_err(|e| name_taken(e, &name))
                    .and_then(|saved| saved.map_err(|r| refused(r, 0, 0)));
                match created {
                    Ok(id) => self.get_profile(id),
                    Err(e) => {
                        stowed.undo();
                        Err(e)
                    }
                }
            }
            ImportTarget::Replace {
                id,
                expected_revision,
            } => {
                let existing = self.get_profile(id)?;
                let doc = doc.with_kept_secrets(Some(&existing));
                let mut inputs = doc.to_inputs(Some(&existing));
                validate_candidates(&inputs)?;
                let accounts = self.accounts_of(&inputs)?;
                let stowed = self.stow_secrets(&name, &mut inputs, Some(&existing))?;
                let writes = super::profiles::with_accounts(&inputs, accounts);
                let replaced = self
                    .store()
                    .replace_profile(id, expected_revision, Some(&name), &writes, now)
                    .map_err(|e| name_taken(e, &name))
                    .and_then(|saved| saved.map_err(|r| refused(r, id, expected_revision)));
                if let Err(e) = replaced {
                    stowed.undo();
                    return Err(e);
                }
                self.release_secrets(&existing.candidates, &super::profiles::agents(&inputs));
                self.get_profile(id)
            }
        }
    }

    /// Saves a document as a new profile `name` beside the profile of the
    /// document's own name: values left out as `[masked]` are that
    /// profile's, and the copy keeps its own keyring entries.
    pub fn import_as_copy(
        &self,
        doc: &ProfileDocument,
        name: &str,
    ) -> Result<Profile, EngineError> {
        let existing = self.store().profile_by_name(&doc.name)?;
        let mut doc = self.with_secret_values(doc.with_kept_secrets(existing.as_ref()))?;
        doc.name = name.to_string();
        self.import_profile(&doc, ImportTarget::New)
    }

    /// A copy of profile `id` under `name`, with new candidate ids (routes
    /// of the original are not affected by edits to the copy).
    pub fn duplicate_profile(&self, id: u32, name: &str) -> Result<Profile, EngineError> {
        let doc = ProfileDocument::from_profile(&self.get_profile(id)?);
        if doc.candidates.is_empty() {
            // Nothing to validate or copy: a profile not set up yet.
            return self.create_profile(name);
        }
        // The copy gets keyring entries of its own.
        let mut doc = self.with_secret_values(doc)?;
        doc.name = name.to_string();
        self.import_profile(&doc, ImportTarget::New)
    }
}
