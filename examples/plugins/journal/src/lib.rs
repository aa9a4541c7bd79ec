//! A journal for the conversation: the plugin the dev-mode example serves from the
//! author's machine (`examples/journal-dev.rs`). Its tools read a secret, keep state,
//! hand a file to another tool, and wait on the engine's abort signal, its staged action
//! is checked and performed through the session, its recap reads the conversation's
//! history and where it runs, and its hook reads the state before the model, so that
//! each part of the context crosses the dev bridge.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "journal",
    engine = ">=0.1, <2",
    api_version = 0,
    display_name = { "en-US": "Journal", "it-IT": "Diario" },
    description = { "en-US": "A journal kept for the conversation.", "it-IT": "Un diario tenuto per la conversazione." },
}

/// The journal's account.
#[derive(Secrets)]
pub struct JournalSecrets {
    /// The account's token.
    #[secret(
        label = { "en-US": "Journal token", "it-IT": "Token del diario" },
        description = { "en-US": "Token of the journal account entries are signed with.", "it-IT": "Token dell'account del diario con cui si firmano le voci." },
    )]
    pub journal_token: Secret,
}

/// An entry to write.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Entry {
    /// The entry's text.
    pub text: String,
}

/// What writing an entry answers.
#[derive(Serialize, JsonSchema)]
pub struct Written {
    /// How many entries the conversation's journal holds now.
    pub entries: u32,
    /// The handle of the entry as a text file, for another tool to take.
    pub file: ArtifactHandle,
    /// Who signed it: the account's token, as its last four characters.
    pub signed_by: String,
}

/// Write an entry in the conversation's journal, and make a text file of it. An entry
/// whose text is `fail` is refused after it was counted, so that the count is not kept.
#[define_tool(summary = { "en-US": "Writes a journal entry.", "it-IT": "Scrive una voce del diario." })]
pub async fn write_entry(
    entry: Entry,
    secrets: JournalSecrets,
    state: &State,
    artifacts: &Artifacts,
    audit: &Audit,
) -> Result<Written, ToolError> {
    let entries = state.get::<u32>("journal.entries").unwrap_or(0) + 1;
    state
        .set("journal.entries", &entries)
        .map_err(|error| ToolError::new(error.to_string()))?;
    if entry.text == "fail" {
        return Err(ToolError::new("the journal refused the entry `fail`"));
    }
    let token = secrets.journal_token.expose();
    let signed_by = token[token.len().saturating_sub(4)..].to_owned();
    let file = artifacts
        .put(entry.text.into_bytes(), "entry.txt", "text/plain")
        .await?;
    audit.record("entry_written", entries);
    Ok(Written {
        entries,
        file,
        signed_by,
    })
}

/// How long to wait.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Wait {
    /// Seconds.
    pub seconds: u32,
}

/// Wait for a while, or until the engine stops waiting: an entry that takes its time.
#[define_tool(summary = { "en-US": "Waits.", "it-IT": "Aspetta." }, read_only)]
pub async fn wait(wait: Wait, abort: &Abort) -> String {
    let slept = std::time::Duration::from_secs(u64::from(wait.seconds));
    tokio::select! {
        () = tokio::time::sleep(slept) => "waited".to_owned(),
        () = abort.aborted() => "stopped".to_owned(),
    }
}

/// A headline to publish.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[tool_args(action)]
pub struct Headline {
    /// The headline, at most 40 characters.
    pub headline: Note<40>,
}

/// What publishing answers.
#[derive(Serialize, JsonSchema)]
pub struct Published {
    /// The headline.
    pub headline: String,
    /// Whom it was published for: the conversation's subscriber.
    pub reader: String,
    /// Who signed it: the account's token, as its last four characters.
    pub signed_by: String,
}

/// Publish a headline for the reader. It is staged: it is done after your reply is sent,
/// so say it is being published, not that it was. A headline of `fail` is refused; one
/// of `wait` takes a minute.
#[define_action(summary = { "en-US": "Publishes a headline.", "it-IT": "Pubblica un titolo." })]
pub async fn publish(
    headline: Headline,
    reader: Subscriber,
    secrets: JournalSecrets,
    audit: &Audit,
) -> Result<Published, ToolError> {
    let headline = headline.headline.into_string();
    match headline.as_str() {
        "fail" => return Err(ToolError::new("the journal refused the headline `fail`")),
        "wait" => tokio::time::sleep(std::time::Duration::from_secs(60)).await,
        _ => {}
    }
    let token = secrets.journal_token.expose();
    let signed_by = token[token.len().saturating_sub(4)..].to_owned();
    audit.record("headline_published", &headline);
    Ok(Published {
        headline,
        reader: reader.id().to_owned(),
        signed_by,
    })
}

/// What a recap answers.
#[derive(Serialize, JsonSchema)]
pub struct Recap {
    /// Where the journal is kept: `<instance>/<agent>/<channel>/<conversation>`, the key
    /// a journal kept outside the engine would file the conversation under.
    pub kept_at: String,
    /// The conversation's last messages, oldest first, as `role: text`.
    pub lines: Vec<String>,
}

/// Recap the conversation so far: its last messages, for a journal entry about it.
#[define_tool(summary = { "en-US": "Recaps the conversation.", "it-IT": "Riassume la conversazione." }, read_only)]
pub async fn recap(
    history: History,
    instance: Instance,
    agent: AgentName,
    channel: Option<TurnChannel>,
) -> Result<Recap, ToolError> {
    let page = history
        .recent(RecentMessages::last(10))
        .await
        .map_err(|error| ToolError::new(error.to_string()))?;
    let channel = channel.map_or_else(
        || "-/-".to_owned(),
        |channel| format!("{}/{}", channel.name(), channel.conversation()),
    );
    Ok(Recap {
        kept_at: format!("{}/{}/{channel}", instance.slug(), agent.name()),
        lines: page
            .messages
            .iter()
            .map(|message| {
                let role = message.role.as_str();
                let calls: Vec<&str> = message
                    .tool_calls
                    .iter()
                    .map(|call| call.tool.as_str())
                    .collect();
                match calls.is_empty() {
                    true => format!("{role}: {}", message.text),
                    false => format!("{role}: {} (called {})", message.text, calls.join(", ")),
                }
            })
            .collect(),
    })
}

/// Tells the model how many entries the conversation's journal holds, once it holds any.
#[define_hook(
    event = "message_received",
    position = 50,
    summary = { "en-US": "Tells the model the journal's size.", "it-IT": "Dice al modello quante voci ha il diario." },
)]
fn note_count(_event: &MessageReceived, state: &State) -> PreModelOutcome {
    match state.get::<u32>("journal.entries") {
        Some(entries) if entries > 0 => {
            PreModelOutcome::InjectContext(format!("The journal holds {entries} entries."))
        }
        _ => PreModelOutcome::Observe,
    }
}
