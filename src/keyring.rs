//! The desktop keyring through the Secret Service API (freedesktop.org; GNOME
//! Keyring and KWallet serve it) on the session bus: where secret-looking
//! `env` values of candidates are kept, the database holding only a
//! reference to each ([`crate::agent::keyring_reference`]).
//!
//! Only a keyring that is running is used: one that D-Bus could start on
//! demand would start locked and ask for a password nobody expects. Items
//! go into the default collection, which must be unlocked: Recourse never
//! prompts. Secrets cross the session bus in the protocol's `plain`
//! session: the bus is private to the user, who can read the database
//! anyway; what this protects is the file at rest.
//!
//! `RECOURSE_KEYRING=off` turns the keyring off (values stay in the 0600
//! database file); `DBUS_SESSION_BUS_ADDRESS` names the bus, as for every
//! D-Bus client.

use std::collections::HashMap;
use std::time::Duration;

use zbus::blocking::Connection;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

const SERVICE: &str = "org.freedesktop.secrets";
const SERVICE_PATH: &str = "/org/freedesktop/secrets";
const SERVICE_IFACE: &str = "org.freedesktop.Secret.Service";
const COLLECTION_IFACE: &str = "org.freedesktop.Secret.Collection";
const ITEM_IFACE: &str = "org.freedesktop.Secret.Item";
/// The attribute that finds an item by its reference.
const REFERENCE: &str = "recourse-reference";

/// A keyring call that did not answer within this is a failure, so a hung
/// keyring cannot hang a save or a dispatch.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the keyring cannot be used now, in words for a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyringError {
    #[error("no keyring is running")]
    NotRunning,
    #[error("the keyring is turned off (RECOURSE_KEYRING=off)")]
    TurnedOff,
    #[error("the keyring is locked")]
    Locked,
    #[error("the keyring failed: {0}")]
    Failed(String),
}

impl From<zbus::Error> for KeyringError {
    fn from(e: zbus::Error) -> KeyringError {
        KeyringError::Failed(e.to_string())
    }
}

/// An open session with a running, unlocked keyring.
pub struct Keyring {
    conn: Connection,
    session: OwnedObjectPath,
    collection: OwnedObjectPath,
}

impl Keyring {
    /// The keyring of the session bus, if one runs and is unlocked.
    pub fn open() -> Result<Keyring, KeyringError> {
        if std::env::var("RECOURSE_KEYRING").is_ok_and(|v| v == "off") {
            return Err(KeyringError::TurnedOff);
        }
        let conn = zbus::blocking::connection::Builder::session()
            .and_then(|b| b.method_timeout(CALL_TIMEOUT).build())
            .map_err(|_| KeyringError::NotRunning)?;
        let running: bool = call(
            &conn,
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "NameHasOwner",
            &(SERVICE,),
            Some("org.freedesktop.DBus"),
        )?;
        if !running {
            return Err(KeyringError::NotRunning);
        }
        let (_, session): (OwnedValue, OwnedObjectPath) = call(
            &conn,
            SERVICE_PATH,
            SERVICE_IFACE,
            "OpenSession",
            &("plain", Value::from("")),
            Some(SERVICE),
        )?;
        let collection: OwnedObjectPath = call(
            &conn,
            SERVICE_PATH,
            SERVICE_IFACE,
            "ReadAlias",
            &("default",),
            Some(SERVICE),
        )?;
        if collection.as_str() == "/" {
            return Err(KeyringError::Failed("it has no default collection".into()));
        }
        let locked: OwnedValue = call(
            &conn,
            collection.as_str(),
            "org.freedesktop.DBus.Properties",
            "Get",
            &(COLLECTION_IFACE, "Locked"),
            Some(SERVICE),
        )?;
        if bool::try_from(locked).unwrap_or(true) {
            return Err(KeyringError::Locked);
        }
        Ok(Keyring {
            conn,
            session,
            collection,
        })
    }

    /// Whether a keyring could be used now, without opening a session.
    pub fn available() -> Result<(), KeyringError> {
        Keyring::open().map(|_| ())
    }

    /// Keeps `value` under `reference`, labelled for a person looking in
    /// the keyring (Seahorse, KWallet Manager); `attributes` are shown there
    /// too.
    pub fn store(
        &self,
        reference: &str,
        label: &str,
        attributes: &[(&str, &str)],
        value: &str,
    ) -> Result<(), KeyringError> {
        let mut all: HashMap<&str, &str> = attributes.iter().copied().collect();
        all.insert("application", "recourse");
        all.insert(REFERENCE, reference);
        let mut properties: HashMap<&str, Value<'_>> = HashMap::new();
        properties.insert("org.freedesktop.Secret.Item.Label", Value::from(label));
        properties.insert("org.freedesktop.Secret.Item.Attributes", Value::from(all));
        let secret = (
            self.session.as_ref(),
            Vec::<u8>::new(),
            value.as_bytes().to_vec(),
            "text/plain; charset=utf8",
        );
        let (_, prompt): (OwnedObjectPath, OwnedObjectPath) = call(
            &self.conn,
            self.collection.as_str(),
            COLLECTION_IFACE,
            "CreateItem",
            &(properties, secret, true),
            Some(SERVICE),
        )?;
        if prompt.as_str() != "/" {
            return Err(KeyringError::Locked);
        }
        Ok(())
    }

    /// The value kept under `reference`; `None` when there is none.
    pub fn lookup(&self, reference: &str) -> Result<Option<String>, KeyringError> {
        let Some(item) = self.find(reference)? else {
            return Ok(None);
        };
        let (_, _, value, _): (OwnedObjectPath, Vec<u8>, Vec<u8>, String) = call(
            &self.conn,
            item.as_str(),
            ITEM_IFACE,
            "GetSecret",
            &(self.session.as_ref(),),
            Some(SERVICE),
        )?;
        String::from_utf8(value)
            .map(Some)
            .map_err(|_| KeyringError::Failed("the stored value is not UTF-8 text".into()))
    }

    /// Removes what is kept under `reference` (nothing when there is none).
    pub fn delete(&self, reference: &str) -> Result<(), KeyringError> {
        let Some(item) = self.find(reference)? else {
            return Ok(());
        };
        let prompt: OwnedObjectPath = call(
            &self.conn,
            item.as_str(),
            ITEM_IFACE,
            "Delete",
            &(),
            Some(SERVICE),
        )?;
        if prompt.as_str() != "/" {
            return Err(KeyringError::Locked);
        }
        Ok(())
    }

    /// The unlocked item holding `reference`.
    fn find(&self, reference: &str) -> Result<Option<OwnedObjectPath>, KeyringError> {
        let wanted: HashMap<&str, &str> = [("application", "recourse"), (REFERENCE, reference)]
            .into_iter()
            .collect();
        let (unlocked, locked): (Vec<OwnedObjectPath>, Vec<OwnedObjectPath>) = call(
            &self.conn,
            SERVICE_PATH,
            SERVICE_IFACE,
            "SearchItems",
            &(wanted,),
            Some(SERVICE),
        )?;
        match (unlocked.into_iter().next(), locked.is_empty()) {
            (Some(item), _) => Ok(Some(item)),
            (None, false) => Err(KeyringError::Locked),
            (None, true) => Ok(None),
        }
    }
}

/// A new item reference: 128 random bits in hexadecimal.
pub fn new_reference() -> Result<String, KeyringError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| KeyringError::Failed(format!("no random reference: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `env` with each keyring reference replaced by the value it stands for,
/// for launching an agent; an error names the variable and why its value
/// cannot be had. Opens the keyring only when a reference is there.
pub fn resolve_env(
    env: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let referenced: Vec<&String> = env
        .iter()
        .filter(|(_, v)| crate::agent::keyring_reference(v).is_some())
        .map(|(name, _)| name)
        .collect();
    let Some(first) = referenced.first() else {
        return Ok(env.clone());
    };
    let unavailable = |name: &str, why: &dyn std::fmt::Display| {
        format!("{name} is kept in the keyring, and {why}; its value cannot be passed to the agent")
    };
    let keyring = Keyring::open().map_err(|e| unavailable(first, &e))?;
    let mut out = env.clone();
    for name in referenced {
        let reference = crate::agent::keyring_reference(&env[name]).unwrap_or_default();
        match keyring.lookup(reference) {
            Ok(Some(value)) => {
                out.insert(name.clone(), value);
            }
            Ok(None) => {
                return Err(unavailable(
                    name,
                    &"the keyring has no entry for it (removed there?); type the value again",
                ))
            }
            Err(e) => return Err(unavailable(name, &e)),
        }
    }
    Ok(out)
}

/// One method call and its reply's body.
fn call<B, R>(
    conn: &Connection,
    path: &str,
    iface: &str,
    method: &str,
    body: &B,
    destination: Option<&str>,
) -> Result<R, KeyringError>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
    R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
{
    let reply = conn.call_method(destination, path, Some(iface), method, body)?;
    reply
        .body()
        .deserialize::<R>()
        .map_err(|e| KeyringError::Failed(format!("{method}: {e}")))
}
