//! Contact outcomes logged in a CRM, as a **staged action**: the model's call only stages
//! the log, and the engine performs it once the reply is sent and the guardrails passed
//! it. The CRM here is a file of JSON lines (the `crm_book` secret names it), so that a
//! test can read what was performed; a real plugin would call the CRM's API.

use std::io::Write;
use std::path::PathBuf;

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "contacts",
    engine = ">=0.1, <2",
    api_version = 0,
    display_name = { "en-US": "Contacts", "it-IT": "Contatti" },
    description = {
        "en-US": "Logs the outcome of each contact with a customer in the CRM.",
        "it-IT": "Registra nel CRM l'esito di ogni contatto con un cliente.",
    },
}

/// How a contact went.
#[derive(Debug, Deserialize, Serialize, JsonSchema, ToolArgs, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The customer wants to go on.
    Interested,
    /// The customer does not.
    NotInterested,
    /// The customer asked to be called back.
    CallBack,
}

/// When to call the customer back. An enum rather than a number of days: every value
/// the model can send is one the CRM takes, so nothing valid when staged fails when
/// performed.
#[derive(Debug, Deserialize, Serialize, JsonSchema, ToolArgs, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CallBack {
    /// The next working day.
    Tomorrow,
    /// In three working days.
    InThreeDays,
    /// In a week.
    NextWeek,
}

/// The arguments of `log_contact`: no free text but a bounded note, and never the
/// customer, who is the conversation's.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
pub struct LogContact {
    /// How the contact went.
    pub outcome: Outcome,
    /// When to call the customer back; null for no call-back.
    pub call_back: Option<CallBack>,
    /// What the customer asked for, in one sentence of at most 280 characters.
    pub note: Note<280>,
}

/// Where the CRM keeps contact records.
#[derive(Secrets)]
pub struct CrmBook {
    /// The book's location.
    #[secret(
        label = { "en-US": "CRM book", "it-IT": "Registro del CRM" },
        description = {
            "en-US": "Where contact records go: a file of JSON lines in this example.",
            "it-IT": "Dove vanno i contatti: un file di righe JSON in questo esempio.",
        },
    )]
    pub crm_book: Secret,
}

/// One contact record, as written to the CRM.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ContactRecord {
    /// The customer, from the turn.
    pub customer: String,
    /// How the contact went.
    pub outcome: Outcome,
    /// When to call back.
    pub call_back: Option<CallBack>,
    /// The note.
    pub note: String,
}

/// Log how this contact with the customer went, in the CRM. It is staged: it is done
/// after your reply is sent, so say it is being logged, not that it was.
#[define_action(
    summary = { "en-US": "Logs the contact's outcome in the CRM.", "it-IT": "Registra l'esito del contatto nel CRM." },
    category = "crm",
    example = r#"{ "outcome": "call_back", "call_back": "in_three_days", "note": "Wants the premium plan's prices." }"#,
)]
pub async fn log_contact(
    args: LogContact,
    customer: Subscriber,
    book: CrmBook,
    audit: &Audit,
) -> Result<ContactRecord, ToolError> {
    let record = ContactRecord {
        customer: customer.id().to_owned(),
        outcome: args.outcome,
        call_back: args.call_back,
        note: args.note.into_string(),
    };
    let line = serde_json::to_string(&record).expect("a record serializes");
    let path = PathBuf::from(book.crm_book.expose());
    tokio::task::spawn_blocking(move || append_line(&path, &line))
        .await
        .map_err(|_| ToolError::new("the CRM write stopped"))?
        .map_err(|error| {
            ToolError::new(format!(
                "the CRM book could not be written: {}",
                error.kind()
            ))
        })?;
    audit.record("contact_logged", customer.id());
    Ok(record)
}

/// Appends `line` to the book and syncs it: a logged contact survives a crash.
fn append_line(path: &std::path::Path, line: &str) -> std::io::Result<()> {
    let mut book = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    book.write_all(format!("{line}\n").as_bytes())?;
    book.sync_data()
}
