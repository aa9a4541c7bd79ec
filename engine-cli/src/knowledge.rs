//! `engine knowledge`: an agent's documents as an operator reaches them, at `manage`,
//! written as the origin `operator` (seed 003 leaves this to its panel).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use engine_core::Engine;
use plugin_sdk::engine::{KnowledgeStore, Scope};
use plugin_sdk::knowledge::{ListCursor, Listing};

use crate::args::{KnowledgeCommand, ListFormat};

/// Runs `command` over `agent`'s knowledge base in the engine's store, whose documents
/// are at most `max_bytes` (`[knowledge] max_document_bytes`).
pub(crate) fn run(
    engine: &Engine,
    agent: &str,
    command: KnowledgeCommand,
    max_bytes: usize,
) -> ExitCode {
    let Some(store) = engine.knowledge_store() else {
        eprintln!(
            "no agent grants knowledge, so the engine opens no knowledge store: grant it with `[agents.{agent}] knowledge = \"read\"` (or `write`, `manage`)"
        );
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime starts");
    runtime.block_on(async {
        match command {
            KnowledgeCommand::List {
                limit,
                after,
                format,
            } => list(&store, agent, limit.into(), after, format).await,
            KnowledgeCommand::Upload { files, name, by } => {
                upload(&store, agent, &files, name, &by, max_bytes).await
            }
            KnowledgeCommand::Delete { ids } => delete(&store, agent, &ids).await,
            KnowledgeCommand::Wipe { yes: _ } => match store.wipe(agent).await {
                Ok(count) => {
                    println!("wiped {count} documents of the agent `{agent}`");
                    ExitCode::SUCCESS
                }
                Err(refusal) => {
                    eprintln!("nothing wiped: {refusal}");
                    ExitCode::FAILURE
                }
            },
        }
    })
}

async fn list(
    store: &Arc<dyn KnowledgeStore>,
    agent: &str,
    limit: usize,
    after: Option<String>,
    format: ListFormat,
) -> ExitCode {
    let after = after.map(ListCursor::after);
    let scope = Scope::operator(agent, "operator");
    let page: Listing = match store.list(&scope, limit, after.as_ref()).await {
        Ok(page) => page,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    match format {
        ListFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&page).expect("a listing serializes")
        ),
        ListFormat::Text => {
            // Names are whatever a tool wrote: shown with their control characters
            // escaped, so that none rewrites the terminal or forges a line.
            for document in &page.documents {
                println!(
                    "{:>8}  {}  {} bytes  {}:{}",
                    document.id,
                    document.filename.escape_debug(),
                    document.size,
                    document.origin,
                    document.origin_ref.escape_debug()
                );
            }
            if let Some(next) = &page.next {
                match shell_quoted(next.filename()) {
                    Some(quoted) => eprintln!("more follow: add --after {quoted}"),
                    None => eprintln!(
                        "more follow: the page ends on a name with control characters; `--format json` gives its cursor"
                    ),
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// `text` in single quotes for a POSIX shell (nothing inside is expanded), or `None`
/// when it holds a control character, which a terminal would act on.
fn shell_quoted(text: &str) -> Option<String> {
    (!text.chars().any(char::is_control)).then(|| format!("'{}'", text.replace('\'', "'\\''")))
}

async fn upload(
    store: &Arc<dyn KnowledgeStore>,
    agent: &str,
    files: &[PathBuf],
    name: Option<String>,
    by: &str,
    max_bytes: usize,
) -> ExitCode {
    if name.is_some() && files.len() > 1 {
        eprintln!("--name names one document: give one file with it");
        return ExitCode::from(2);
    }
    // Every file read first: one that cannot be read leaves the store as it was.
    let mut documents = Vec::with_capacity(files.len());
    for file in files {
        match read(file, name.as_deref(), max_bytes) {
            Ok(document) => documents.push(document),
            Err(error) => {
                eprintln!("nothing uploaded: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let scope = Scope::operator(agent, by);
    let mut refused = false;
    for (filename, content) in documents {
        match store.write(&scope, &filename, &content).await {
            Ok(written) => println!(
                "{} {}  {filename}",
                if written.created {
                    "created"
                } else {
                    "updated"
                },
                written.document.id
            ),
            Err(refusal) => {
                eprintln!("refused {filename}: {refusal}");
                refused = true;
            }
        }
    }
    if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The document `file` makes: its name (`name`, or the file's) and its text, at most
/// `max_bytes` (a larger file is not read).
fn read(file: &Path, name: Option<&str>, max_bytes: usize) -> Result<(String, String), String> {
    let filename = match name {
        Some(name) => name.to_owned(),
        None => file
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| format!("{} has no file name in UTF-8", file.display()))?
            .to_owned(),
    };
    if filename.is_empty() {
        return Err("a document's name is empty".to_owned());
    }
    let failed = |error: std::io::Error| format!("{}: {error}", file.display());
    // Read one byte past the cap and no more: a device or a pipe has no size to ask.
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|opened| opened.take(max_bytes as u64 + 1).read_to_end(&mut bytes))
        .map_err(failed)?;
    if bytes.len() > max_bytes {
        return Err(format!(
            "{} is larger than a document may be, {max_bytes} bytes (`[knowledge] max_document_bytes`)",
            file.display()
        ));
    }
    let content = String::from_utf8(bytes)
        .map_err(|_| format!("{} is not UTF-8 text: documents are text", file.display()))?;
    Ok((filename, content))
}

async fn delete(store: &Arc<dyn KnowledgeStore>, agent: &str, ids: &[i64]) -> ExitCode {
    let scope = Scope::operator(agent, "operator");
    let mut refused = false;
    for &id in ids {
        match store.delete(&scope, id).await {
            Ok(deleted) => println!("deleted {id}  {}", deleted.document.filename),
            Err(refusal) => {
                eprintln!("refused {id}: {refusal}");
                refused = true;
            }
        }
    }
    if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
