//! The tools the tests call, one per extractor.

use std::time::Duration;

use plugin_sdk::knowledge::{Document, Manage, Mutation, Read, Write};
use plugin_sdk::prelude::*;
use serde_json::{json, Value};

/// The CRM's key.
#[derive(Secrets)]
pub struct CrmSecrets {
    /// The key.
    #[secret(label = { "en-US": "CRM API key", "it-IT": "Chiave API del CRM" }, description = "The key of the CRM account.")]
    pub crm_api_key: Secret,
}

/// The mail service's token.
#[derive(Secrets)]
pub struct MailSecrets {
    /// The token.
    #[secret(label = "Mail token", description = "The token of the mail service.")]
    pub mail_token: Secret,
}

/// The region of the mail service, chosen from a list.
#[derive(Secrets)]
pub struct RegionSecrets {
    /// The region.
    #[secret(label = "Region", description = "Where the account lives.", type = "select", choices = ["eu", "us"])]
    pub mail_region: Secret,
    /// The account, shown as typed.
    #[secret(label = "Account", description = "The account's id.", type = "text")]
    pub mail_account: Secret,
}

/// Answers the configured region and account.
#[define_tool]
async fn mail_region(secrets: RegionSecrets) -> String {
    format!(
        "{} {}",
        secrets.mail_region.expose(),
        secrets.mail_account.expose()
    )
}

/// Logs its own key by mistake, and answers how the key prints.
#[define_tool]
async fn crm_leak(secrets: CrmSecrets, audit: &Audit) -> String {
    let key = secrets.crm_api_key.expose();
    audit.record(
        &format!("used {key}"),
        json!({ "key": key, "nested": [format!("Bearer {key}")] }),
    );
    format!("{:?} {}", secrets.crm_api_key, secrets.crm_api_key)
}

/// Panics with its key in the message.
#[define_tool]
async fn crm_panic(secrets: CrmSecrets) -> String {
    panic!("the CRM refused key {}", secrets.crm_api_key.expose())
}

/// Shows what its context holds.
#[define_tool]
async fn context_keys(_secrets: CrmSecrets, context: &ToolContext) -> String {
    format!("{context:?}")
}

/// Sends mail.
#[define_tool]
async fn mail_send(secrets: MailSecrets) -> bool {
    !secrets.mail_token.expose().is_empty()
}

/// A state write.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Put {
    key: String,
    value: String,
    /// Fail after writing.
    fail: bool,
    /// Wait this long after writing, before returning.
    wait_ms: u64,
}

/// Writes a value into the conversation's state.
#[define_tool]
async fn state_put(args: Put, state: &State) -> Result<String, ToolError> {
    state
        .set(&args.key, &args.value)
        .expect("a string serializes");
    tokio::time::sleep(Duration::from_millis(args.wait_ms)).await;
    if args.fail {
        return Err(ToolError::new("failed after writing"));
    }
    Ok(state.get::<String>(&args.key).unwrap_or_default())
}

/// A key.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Key {
    key: String,
}

/// Reads a value of the conversation's state.
#[define_tool]
async fn state_get(args: Key, state: &State) -> Option<String> {
    state.get(&args.key)
}

/// Text to hand over.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Text {
    text: String,
}

/// Text, and how long to keep it.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Brief {
    text: String,
    ttl_ms: u64,
}

/// Keeps text as an artifact for a while at most.
#[define_tool]
async fn artifact_put_for(args: Brief, artifacts: &Artifacts) -> Result<ArtifactHandle, ToolError> {
    let ttl = Duration::from_millis(args.ttl_ms);
    Ok(artifacts
        .put_for(ttl, args.text.into_bytes(), "note.txt", "text/plain")
        .await?)
}

/// Keeps text as an artifact.
#[define_tool]
async fn artifact_put(args: Text, artifacts: &Artifacts) -> Result<ArtifactHandle, ToolError> {
    Ok(artifacts
        .put(args.text.into_bytes(), "note.txt", "text/plain")
        .await?)
}

/// A handle.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Handle {
    handle: ArtifactHandle,
}

/// Takes an artifact's text.
#[define_tool]
async fn artifact_take(args: Handle, artifacts: &Artifacts) -> Result<Option<String>, ToolError> {
    let Some(artifact) = artifacts.take(&args.handle).await? else {
        return Ok(None);
    };
    Ok(Some(String::from_utf8(artifact.bytes).expect("text")))
}

/// Who and where.
#[derive(Serialize, JsonSchema)]
struct Who {
    subscriber: String,
    conversation: String,
}

/// Says whom the turn is for.
#[define_tool]
async fn whoami(subscriber: Subscriber, conversation: Conversation) -> Who {
    Who {
        subscriber: subscriber.id().to_owned(),
        conversation: conversation.id().to_owned(),
    }
}

/// A document to write.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Doc {
    filename: String,
    content: String,
}

/// A mutation's answer as the model would read it.
fn mutation(outcome: Mutation) -> Value {
    match outcome {
        Ok(written) => json!({ "ok": written }),
        Err(refusal) => json!({ "refused": refusal }),
    }
}

/// Writes a document.
#[define_tool]
async fn kb_write(args: Doc, kb: Knowledge<Write>) -> Value {
    mutation(kb.write(&args.filename, &args.content).await)
}

/// Writes any document, as a manager.
#[define_tool]
async fn kb_manage_write(args: Doc, kb: Knowledge<Manage>) -> Value {
    mutation(kb.write(&args.filename, &args.content).await)
}

/// An id.
#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Id {
    id: i64,
}

/// Deletes a document.
#[define_tool]
async fn kb_delete(args: Id, kb: Knowledge<Write>) -> Value {
    mutation(kb.delete(args.id).await)
}

/// Reads a document.
#[define_tool]
async fn kb_get(args: Id, kb: Knowledge<Read>) -> Result<Option<String>, ToolError> {
    Ok(kb
        .get(args.id)
        .await?
        .map(|document: Document| document.content))
}

/// Searches, or says the knowledge base is not granted.
#[define_tool]
async fn kb_search(args: Text, kb: Option<Knowledge<Read>>) -> Result<Vec<String>, ToolError> {
    let Some(kb) = kb else {
        return Ok(vec!["knowledge is not granted".into()]);
    };
    let hits = kb.search(&args.text, 5).await?;
    Ok(hits.into_iter().map(|hit| hit.filename).collect())
}

/// Asks the fast model, or says model access is not granted.
#[define_tool]
async fn ask(args: Text, model: Option<Model>) -> Result<String, ToolError> {
    let Some(model) = model else {
        return Ok("no model access".into());
    };
    let request = ChatRequest {
        tier: Tier::Fast,
        system: Some("Answer briefly.".into()),
        messages: vec![ChatMessage::user(args.text)],
        max_output_tokens: None,
    };
    Ok(model.chat(request).await?.text)
}

/// Searches with the least level it needs, and notes the query in the knowledge base
/// when the agent grants writes: the seed's "read, then write if the agent allows it".
#[define_tool]
async fn kb_note(args: Text, kb: Knowledge<Read>) -> Result<Value, ToolError> {
    let hits = kb.search(&args.text, 5).await?;
    let noted = match kb.at_level::<Write>() {
        Some(writer) => Some(mutation(writer.write("queries.md", &args.text).await)),
        None => None,
    };
    Ok(json!({
        "level": kb.level(),
        "granted": kb.granted(),
        "hits": hits.len(),
        "noted": noted,
    }))
}

/// Works in steps without `.await` until nobody waits any more, and says how it
/// stopped and whether it knew its deadline.
#[define_tool]
async fn spin_until_aborted(abort: &Abort) -> Value {
    let knew_deadline = abort.remaining().is_some();
    let started = std::time::Instant::now();
    while !abort.is_aborted() {
        if started.elapsed() > Duration::from_secs(30) {
            return json!({ "stopped": "never aborted" });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    json!({ "stopped": "aborted", "knew_deadline": knew_deadline })
}

/// What the thread of `hand_off_and_wait` saw, by the key it was given.
pub static HANDED_OFF: std::sync::Mutex<Vec<(String, &'static str)>> =
    std::sync::Mutex::new(Vec::new());

/// Hands its work to a thread with the abort signal, and waits for it forever: the
/// thread is told when the engine stops waiting.
#[define_tool]
async fn hand_off_and_wait(args: Text, abort: &Abort) -> String {
    let abort = abort.clone();
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let seen = loop {
            if abort.is_aborted() {
                break "aborted";
            }
            if started.elapsed() > Duration::from_secs(30) {
                break "never aborted";
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        HANDED_OFF.lock().unwrap().push((args.text, seen));
    });
    std::future::pending::<()>().await;
    unreachable!("the engine stops waiting first")
}

/// Spawns a task that awaits the abort signal, and waits for it forever: the task is
/// woken when the engine stops waiting.
#[define_tool]
async fn spawn_and_wait(args: Text, abort: &Abort) -> String {
    let aborted = abort.aborted();
    tokio::spawn(async move {
        aborted.await;
        HANDED_OFF.lock().unwrap().push((args.text, "woken"));
    });
    std::future::pending::<()>().await;
    unreachable!("the engine stops waiting first")
}

/// Says hello; its name has a `-`, as the seed's names do.
#[define_tool(name = "say-hello")]
async fn say_hello() -> &'static str {
    "hello"
}
