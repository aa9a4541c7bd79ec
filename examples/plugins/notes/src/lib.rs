//! Notes for an agent: the tool context by example. Conversation state (`remember`,
//! `recall`), the agent's knowledge base (`save_note`, `search_notes`), artifacts
//! (`note_file`, `read_file`) and model access (`summarize`). Each tool's signature says what it needs;
//! the engine equips `save_note` only for agents that grant the knowledge base at `write`.

use plugin_sdk::knowledge::{Read, Write};
use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "notes",
    engine = ">=0.1, <2",
    display_name = { "en-US": "Notes", "it-IT": "Appunti" },
    description = { "en-US": "Notes kept for the conversation and in the agent's knowledge base.", "it-IT": "Appunti tenuti per la conversazione e nella base di conoscenza dell'agente." },
}

/// A note to keep.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Note {
    /// A short name for the note, such as `allergies`.
    pub name: String,
    /// The note's text.
    pub text: String,
}

/// A note's name.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Name {
    /// The name the note was kept under.
    pub name: String,
}

fn state_key(name: &str) -> String {
    format!("notes.{name}")
}

/// Keep a note for the rest of this conversation.
#[define_tool(summary = { "en-US": "Keeps a note for the conversation.", "it-IT": "Tiene un appunto per la conversazione." }, idempotent)]
pub async fn remember(note: Note, state: &State) -> Result<bool, ToolError> {
    state
        .set(&state_key(&note.name), &note.text)
        .map_err(|error| ToolError::new(error.to_string()))?;
    Ok(true)
}

/// Read back a note kept earlier in this conversation; null if there is none.
#[define_tool(summary = { "en-US": "Reads a note of the conversation.", "it-IT": "Legge un appunto della conversazione." }, read_only)]
pub async fn recall(name: Name, state: &State) -> Option<String> {
    state.get(&state_key(&name.name))
}

/// Save a note in the agent's knowledge base, where later conversations find it.
#[define_tool(summary = { "en-US": "Saves a note in the knowledge base.", "it-IT": "Salva un appunto nella base di conoscenza." })]
pub async fn save_note(
    note: Note,
    knowledge: Knowledge<Write>,
    audit: &Audit,
) -> Result<String, ToolError> {
    let filename = format!("{}.md", note.name);
    match knowledge.write(&filename, &note.text).await {
        Ok(written) => {
            audit.record("note_saved", &filename);
            Ok(if written.created {
                format!("saved as {filename}")
            } else {
                format!("updated {filename}")
            })
        }
        Err(refusal) => Ok(format!("not saved: {refusal}")),
    }
}

/// What to look for.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct Query {
    /// Words to look for.
    pub words: String,
}

/// Search the agent's knowledge base; says so when the agent has none.
#[define_tool(summary = { "en-US": "Searches the knowledge base.", "it-IT": "Cerca nella base di conoscenza." }, read_only)]
pub async fn search_notes(
    query: Query,
    knowledge: Option<Knowledge<Read>>,
) -> Result<Vec<String>, ToolError> {
    let Some(knowledge) = knowledge else {
        return Ok(vec!["this agent has no knowledge base".to_owned()]);
    };
    let hits = knowledge.search(&query.words, 5).await?;
    Ok(hits
        .into_iter()
        .map(|hit| format!("{}: {}", hit.filename, hit.snippet))
        .collect())
}

/// Turn a note into a text file that another tool of this conversation can take, by the
/// handle this returns.
#[define_tool(summary = { "en-US": "Makes a file of a note.", "it-IT": "Fa un file di un appunto." })]
pub async fn note_file(note: Note, artifacts: &Artifacts) -> Result<ArtifactHandle, ToolError> {
    Ok(artifacts
        .put(
            note.text.into_bytes(),
            format!("{}.txt", note.name),
            "text/plain",
        )
        .await?)
}

/// A file's handle.
#[derive(Deserialize, JsonSchema, ToolArgs)]
pub struct FileHandle {
    /// The file's handle: as a tool of this conversation answered it, or as the message
    /// it was attached to names it.
    pub handle: ArtifactHandle,
}

/// Read the text of a file of this conversation, by its handle: one another tool made, or
/// one the user attached to a message. A file is read once: null when the handle is
/// unknown, was read already, or expired.
#[define_tool(summary = { "en-US": "Reads a file made in the conversation.", "it-IT": "Legge un file fatto nella conversazione." })]
pub async fn read_file(
    file: FileHandle,
    artifacts: &Artifacts,
) -> Result<Option<String>, ToolError> {
    let Some(artifact) = artifacts.take(&file.handle).await? else {
        return Ok(None);
    };
    Ok(Some(String::from_utf8_lossy(&artifact.bytes).into_owned()))
}

/// Summarize a note in one sentence: with the agent's fast model when it grants one,
/// else by keeping the first sentence.
#[define_tool(summary = { "en-US": "Summarizes a note.", "it-IT": "Riassume un appunto." }, read_only)]
pub async fn summarize(note: Note, model: Option<Model>) -> Result<String, ToolError> {
    let Some(model) = model else {
        let first = note
            .text
            .split_inclusive(['.', '!', '?'])
            .next()
            .unwrap_or_default();
        return Ok(first.trim().to_owned());
    };
    let request = ChatRequest {
        tier: Tier::Fast,
        system: Some("Summarize the user's note in one sentence.".into()),
        messages: vec![ChatMessage::user(note.text)],
        // One sentence: a short answer reserves little of the turn's budget.
        max_output_tokens: Some(100),
    };
    Ok(model.chat(request).await?.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<F: std::future::Future>(future: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        match std::pin::pin!(future).poll(&mut context) {
            std::task::Poll::Ready(output) => output,
            std::task::Poll::Pending => unreachable!("these calls never wait"),
        }
    }

    #[test]
    fn without_a_model_the_summary_is_the_first_sentence() {
        let note = Note {
            name: "visit".into(),
            text: "Bring the lab results. Parking is behind the clinic.".into(),
        };
        assert_eq!(
            run(summarize(note, None)).unwrap(),
            "Bring the lab results."
        );
    }

    #[test]
    fn a_remembered_note_is_recalled_within_the_call() {
        let state = State::default();
        let note = Note {
            name: "allergies".into(),
            text: "penicillin".into(),
        };
        assert!(run(remember(note, &state)).unwrap());
        let name = Name {
            name: "allergies".into(),
        };
        assert_eq!(run(recall(name, &state)).as_deref(), Some("penicillin"));
    }
}
