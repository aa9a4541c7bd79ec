//! The admin API: JSON under `/v1/admin`, the panel's only way to change anything (its
//! pages read the same [`views`](super::views)). A write answers JSON to JSON, and a
//! form (the panel's, without JavaScript) with a redirect to the page named by its
//! `back` field, the outcome kept for that page. Reference: `docs/admin-api.md`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use engine_core::stores::RecentCursor;
use plugin_sdk::engine::{KnowledgeStore, Scope};
use plugin_sdk::knowledge::ListCursor;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use super::config_edit::switch_tool;
use super::locale::Locale;
use super::session::Session;
use super::views::SecretSource;
use super::{local_path, views, Panel};

/// Who the panel writes knowledge as (`origin_ref` of an operator's document).
const OPERATOR: &str = "panel";
/// The most documents a page of the listing holds.
const PAGE: usize = 50;

pub(crate) fn router() -> Router<Panel> {
    Router::new()
        .route("/v1/admin/agents", get(agents))
        .route("/v1/admin/agents/{agent}/tools", get(tools).post(switch))
        .route("/v1/admin/agents/{agent}/secrets", get(secrets))
        .route("/v1/admin/agents/{agent}/secrets/{key}", post(set_secret))
        .route("/v1/admin/agents/{agent}/conversations", get(conversations))
        .route(
            "/v1/admin/agents/{agent}/conversations/{id}",
            get(conversation),
        )
        .route("/v1/admin/extensions", get(extensions))
        .route(
            "/v1/admin/agents/{agent}/knowledge",
            get(knowledge).post(upload),
        )
        .route(
            "/v1/admin/agents/{agent}/knowledge/{id}/delete",
            post(delete),
        )
        .route("/v1/admin/agents/{agent}/knowledge/wipe", post(wipe))
        // The server's body deadline bounds every body already (rmcp's maximum).
        .layer(axum::extract::DefaultBodyLimit::disable())
}

/// Why a request is not done: its status, and the message.
type Refusal = (StatusCode, String);

/// A write's outcome: a message for people, or a refusal with its status.
type Outcome = Result<(String, Value), Refusal>;

/// A read's answer: its JSON, or the refusal's.
fn answered<T: serde::Serialize>(read: Result<T, Refusal>) -> Response {
    match read {
        Ok(value) => Json(value).into_response(),
        Err((status, message)) => crate::problem::problem(status, &message),
    }
}

/// The configuration the panel changes, or the 409 that says there is none (and
/// `instead`, what to do).
fn configuration(panel: &Panel, instead: &str) -> Result<Arc<dyn super::Configuration>, Refusal> {
    panel.configuration.clone().ok_or_else(|| {
        (
            StatusCode::CONFLICT,
            format!("the engine was not started from a configuration file (`--config`): {instead}"),
        )
    })
}

/// Runs `change` (blocking: it reads and writes files, reloads the engine) off the
/// async workers.
async fn blocking<T: Send + 'static>(
    change: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(change)
        .await
        .unwrap_or_else(|_| Err("the change panicked, and was not made".to_owned()))
}

/// The agent named `name`, or the 404 that says there is none.
fn agent_named(panel: &Panel, name: &str) -> Result<Arc<engine_core::Agent>, Refusal> {
    panel
        .engine
        .agent(name)
        .ok_or_else(|| (StatusCode::NOT_FOUND, format!("no agent is named `{name}`")))
}

/// How a write arrived, and so how it is answered.
enum Via {
    Json,
    /// A page's form: answered with a redirect to `back` (a path of this site).
    Form {
        back: String,
    },
}

impl Via {
    fn answer(self, panel: &Panel, session: Option<&Session>, outcome: Outcome) -> Response {
        match (self, outcome) {
            (Via::Json, Ok((_, value))) => Json(value).into_response(),
            (Via::Json, Err((status, message))) => crate::problem::problem(status, &message),
            (Via::Form { back }, outcome) => {
                if let Some(session) = session {
                    let message = match outcome {
                        Ok((message, _)) => message,
                        Err((_, message)) => format!("! {message}"),
                    };
                    panel.sessions.flash(session, message);
                }
                Redirect::to(&back).into_response()
            }
        }
    }
}

/// A write's payload: JSON, or a URL-encoded form with its `back`.
struct Submitted<T> {
    payload: T,
    via: Via,
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Submitted<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let form = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/x-www-form-urlencoded"));
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let bad = |error: String| crate::problem::problem(StatusCode::BAD_REQUEST, &error);
        if form {
            #[derive(Deserialize)]
            struct Back {
                #[serde(default)]
                back: Option<String>,
            }
            let back: Back =
                serde_urlencoded::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
            let payload = serde_urlencoded::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
            return Ok(Self {
                payload,
                via: Via::Form {
                    back: local_path(back.back.as_deref()).to_owned(),
                },
            });
        }
        // A write with nothing to say (a delete) may send no body at all.
        let body: &[u8] = if bytes.is_empty() { b"{}" } else { &bytes };
        let payload = serde_json::from_slice(body).map_err(|error| bad(error.to_string()))?;
        Ok(Self {
            payload,
            via: Via::Json,
        })
    }
}

/// `GET /v1/admin/agents`.
async fn agents(State(panel): State<Panel>) -> Json<Vec<views::AgentSummary>> {
    Json(views::agents(&panel.engine))
}

/// `GET /v1/admin/agents/{agent}/tools`, in the reader's locale (`Accept-Language`, or
/// the panel's switcher).
async fn tools(State(panel): State<Panel>, Path(agent): Path<String>, locale: Locale) -> Response {
    answered(agent_named(&panel, &agent).map(|found| {
        views::agent_tools(
            &panel.engine,
            &found,
            &locale,
            panel.configuration.is_some(),
        )
    }))
}

/// What `POST /v1/admin/agents/{agent}/tools` takes: `{"tool", "enabled"}` in JSON; a
/// page's form sends the button pressed, `enable=<id>` or `disable=<id>` (one form for
/// the page's every switch keeps a page of a thousand tools light).
#[derive(Deserialize)]
struct Switch {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    enable: Option<String>,
    #[serde(default)]
    disable: Option<String>,
}

impl Switch {
    /// The tool, and whether it is to be enabled.
    fn wanted(self) -> Result<(String, bool), Refusal> {
        match (self.tool, self.enabled, self.enable, self.disable) {
            (Some(tool), Some(enabled), None, None) => Ok((tool, enabled)),
            (None, None, Some(tool), None) => Ok((tool, true)),
            (None, None, None, Some(tool)) => Ok((tool, false)),
            _ => Err((
                StatusCode::BAD_REQUEST,
                "give the tool and whether to enable it: `{\"tool\": \"<id>\", \"enabled\": true}`"
                    .to_owned(),
            )),
        }
    }
}

/// `POST /v1/admin/agents/{agent}/tools` `{"tool": "<id>", "enabled": bool}`: writes the
/// agent's `tools` list into the configuration file and reloads the engine with it, as
/// `SIGHUP` does; a configuration the reload refuses is not written (422, with why).
async fn switch(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    session: Option<Extension<Session>>,
    submitted: Submitted<Switch>,
) -> Response {
    let Submitted { payload, via } = submitted;
    let outcome = match payload.wanted() {
        Ok((tool, enabled)) => switched(&panel, &agent, &tool, enabled).await,
        Err(refused) => Err(refused),
    };
    via.answer(&panel, session.as_deref(), outcome)
}

async fn switched(panel: &Panel, agent: &str, tool: &str, enabled: bool) -> Outcome {
    let config = configuration(panel, "there is none to write")?;
    let found = agent_named(panel, agent)?;
    let Some(linked) = panel.engine.tool(tool) else {
        return Err((StatusCode::NOT_FOUND, format!("no linked tool is `{tool}`")));
    };
    // A wire name is written as the id it names.
    let tool = linked.id();
    // What a list written in place of none holds: what the agent equips now, so that
    // only the switched tool changes.
    let equipped: Vec<String> = found.tools().map(|tool| tool.id().to_owned()).collect();
    let (agent_name, tool_id) = (agent.to_owned(), tool.to_owned());
    let written = blocking(move || {
        let ids: Vec<&str> = equipped.iter().map(String::as_str).collect();
        config.edit(&mut |text| switch_tool(text, &agent_name, &tool_id, enabled, &ids))
    })
    .await;
    let state = if enabled { "enabled" } else { "disabled" };
    match written {
        Ok(changed) => {
            let message = if changed {
                format!("{tool} {state} for {agent}: the configuration file is written and the engine reloaded")
            } else {
                format!("{tool} was already {state} for {agent}")
            };
            let equipped = panel
                .engine
                .agent(agent)
                .is_some_and(|agent| agent.tools().any(|equipped| equipped.id() == tool));
            Ok((
                message,
                json!({ "tool": tool, "enabled": enabled, "changed": changed, "equipped": equipped }),
            ))
        }
        Err(error) => Err((StatusCode::UNPROCESSABLE_ENTITY, error)),
    }
}

/// `GET /v1/admin/agents/{agent}/secrets`: each secret the linked tools and hooks
/// declare, with its label, type and where the agent's value comes from; never a value.
async fn secrets(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    locale: Locale,
) -> Response {
    answered(agent_named(&panel, &agent).map(|found| {
        views::agent_secrets(
            &panel.engine,
            &found,
            &locale,
            panel.configuration.is_some(),
        )
    }))
}

/// The longest secret value the panel sets.
const MAX_SECRET_BYTES: usize = 16 * 1024;

/// What `POST /v1/admin/agents/{agent}/secrets/{key}` takes: `{"value": "..."}` sets,
/// `{"value": null}` clears; a form sends `value`, or `clear=true`.
#[derive(Deserialize)]
struct NewSecret {
    /// Absent (`None`), `null` (`Some(None)`: clear), or the value.
    #[serde(default, deserialize_with = "present")]
    value: Option<Option<String>>,
    #[serde(default)]
    clear: Option<String>,
}

/// A field that is there, `null` or not: absent is the field's default.
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(field).map(Some)
}

impl NewSecret {
    /// The value to set, `None` to clear; a payload that says neither is refused (a
    /// misspelt field must not clear a secret).
    fn wanted(self) -> Result<Option<String>, Refusal> {
        match (self.clear.as_deref(), self.value) {
            (Some("true"), _) | (None, Some(None)) => Ok(None),
            (None, Some(Some(value))) => Ok(Some(value)),
            _ => Err((
                StatusCode::BAD_REQUEST,
                "give `{\"value\": \"...\"}` to set the secret, or `{\"value\": null}` to clear the panel's value".to_owned(),
            )),
        }
    }
}

/// `POST /v1/admin/agents/{agent}/secrets/{key}` `{"value": "..."}`: sets the agent's
/// secret (write-only: no answer or page shows it again) and reloads the engine with it;
/// `{"value": null}` clears the panel's value. A variable in the environment still wins.
async fn set_secret(
    State(panel): State<Panel>,
    Path((agent, key)): Path<(String, String)>,
    session: Option<Extension<Session>>,
    submitted: Submitted<NewSecret>,
) -> Response {
    let Submitted { payload, via } = submitted;
    let outcome = match payload.wanted() {
        Ok(value) => secret_set(&panel, &agent, &key, value).await,
        Err(refused) => Err(refused),
    };
    via.answer(&panel, session.as_deref(), outcome)
}

async fn secret_set(panel: &Panel, agent: &str, key: &str, value: Option<String>) -> Outcome {
    let config = configuration(panel, "set secrets in its environment")?;
    agent_named(panel, agent)?;
    let declared = views::declared_secrets(&panel.engine).find(|(_, spec)| spec.key == key);
    let Some((_, spec)) = declared else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("no linked tool or hook declares the secret `{key}`"),
        ));
    };
    if let Some(value) = &value {
        let refused = if value.is_empty() {
            Some("the value is empty: to remove the panel's value, clear it".to_owned())
        } else if value.len() > MAX_SECRET_BYTES {
            Some(format!("the value is longer than {MAX_SECRET_BYTES} bytes"))
        } else if value.contains('\0') {
            Some("the value holds a NUL character".to_owned())
        } else if let plugin_sdk::secrets::SecretKind::Select(choices) = spec.kind {
            (!choices.contains(&value.as_str()))
                .then(|| format!("`{key}` is one of: {}", choices.join(", ")))
        } else {
            None
        };
        if let Some(refused) = refused {
            return Err((StatusCode::BAD_REQUEST, refused));
        }
    }
    let (agent_name, key_name, cleared) = (agent.to_owned(), key.to_owned(), value.is_none());
    let set = blocking(move || config.set_secret(&agent_name, &key_name, value.as_deref())).await;
    match set {
        Ok(()) => {
            let source = panel
                .engine
                .agent(agent)
                .map_or(SecretSource::Unset, |agent| SecretSource::of(&agent, key));
            let mut message = if cleared {
                format!("cleared the panel's value of {key} for {agent}")
            } else {
                format!("saved {key} for {agent}; it is not shown again")
            };
            if source == SecretSource::Environment {
                message += ": the environment's ENGINE_SECRET__ variable still wins";
            }
            Ok((message, json!({ "key": key, "source": source })))
        }
        Err(error) => Err((StatusCode::UNPROCESSABLE_ENTITY, error)),
    }
}

#[derive(Deserialize)]
pub(crate) struct ConversationsQuery {
    #[serde(default)]
    pub(crate) after: Option<String>,
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

/// `GET /v1/admin/agents/{agent}/conversations[?after=&limit=]`: the agent's
/// conversations, the one whose last turn ended most recently first, a page at a time.
async fn conversations(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    Query(query): Query<ConversationsQuery>,
) -> Response {
    answered(read_conversations(&panel, &agent, &query).await)
}

/// What [`conversations`] answers; the page renders it too.
pub(crate) async fn read_conversations(
    panel: &Panel,
    agent: &str,
    query: &ConversationsQuery,
) -> Result<engine_core::stores::ConversationPage, Refusal> {
    agent_named(panel, agent)?;
    let after = match query.after.as_deref() {
        Some(text) => Some(RecentCursor::parse(text).ok_or((
            StatusCode::BAD_REQUEST,
            "`after` is not a cursor a page of conversations answered".to_owned(),
        ))?),
        None => None,
    };
    panel
        .engine
        .conversations(agent, query.limit.unwrap_or(PAGE), after.as_ref())
        .await
        .map_err(|error| (StatusCode::BAD_GATEWAY, error.to_string()))
}

/// The messages a page of a conversation's history holds, unless `limit` says; and the
/// most it may say.
const MESSAGES_PAGE: usize = 100;
const MAX_MESSAGES_PAGE: usize = 500;

#[derive(Deserialize)]
pub(crate) struct HistoryQuery {
    /// The first message of the page; absent: the last page.
    #[serde(default)]
    pub(crate) offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

impl HistoryQuery {
    /// The messages of a page.
    pub(crate) fn limit(&self) -> usize {
        self.limit
            .unwrap_or(MESSAGES_PAGE)
            .clamp(1, MAX_MESSAGES_PAGE)
    }
}

/// `GET /v1/admin/agents/{agent}/conversations/{id}[?offset=&limit=]`: a page of the
/// conversation's messages (the last page unless `offset` says which), its turns (how
/// each ended, usage, cost) and its staged actions with their outcomes.
async fn conversation(
    State(panel): State<Panel>,
    Path((agent, id)): Path<(String, String)>,
    Query(query): Query<HistoryQuery>,
) -> Response {
    answered(read_history(&panel, &agent, &id, &query).await)
}

/// What [`conversation`] answers; the page renders it too.
pub(crate) async fn read_history(
    panel: &Panel,
    agent: &str,
    id: &str,
    query: &HistoryQuery,
) -> Result<Value, Refusal> {
    let failed = |error: engine_core::stores::ConversationError| {
        (StatusCode::BAD_GATEWAY, error.to_string())
    };
    let engine = &panel.engine;
    let owner = engine.conversation_owner(id).await.map_err(failed)?;
    let Some(owner) = owner.filter(|owner| owner.agent == agent) else {
        return Err((
            StatusCode::NOT_FOUND,
            format!("the agent `{agent}` has no conversation `{id}`"),
        ));
    };
    let messages = engine.conversation(id).await.map_err(failed)?;
    let limit = query.limit();
    let total = messages.len();
    let offset = query
        .offset
        .unwrap_or(total.saturating_sub(limit))
        .min(total);
    let page = &messages[offset..(offset + limit).min(total)];
    let turns = engine.conversation_turns(id).await.map_err(failed)?;
    let actions = engine.conversation_actions(id).await.map_err(failed)?;
    Ok(json!({
        "conversation": id,
        "subscriber": owner.subscriber,
        "total": total,
        "offset": offset,
        "messages": page,
        "turns": turns,
        "actions": actions,
    }))
}

/// `GET /v1/admin/extensions`: the extensions directory's files, their states and
/// errors, the tools they offer, and the drop-in providers.
async fn extensions(State(panel): State<Panel>) -> Json<Value> {
    Json(crate::extensions::status(&panel.engine))
}

/// The agent's knowledge store, or why there is none.
fn store_of(panel: &Panel, agent: &str) -> Result<Arc<dyn KnowledgeStore>, Refusal> {
    let granted = agent_named(panel, agent)?;
    match (granted.config().knowledge, panel.engine.knowledge_store()) {
        (Some(_), Some(store)) => Ok(store),
        _ => Err((
            StatusCode::NOT_FOUND,
            format!("the agent `{agent}` has no knowledge base: grant it with `[agents.{agent}] knowledge = \"read\"`"),
        )),
    }
}

#[derive(Deserialize)]
pub(crate) struct KnowledgeQuery {
    /// Full-text search; absent: the listing.
    #[serde(default)]
    pub(crate) q: Option<String>,
    #[serde(default)]
    pub(crate) after: Option<String>,
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

/// `GET /v1/admin/agents/{agent}/knowledge[?after=&limit=]`: a page of the documents by
/// name, with the next page's cursor; `?q=`: a search, best first.
async fn knowledge(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    Query(query): Query<KnowledgeQuery>,
) -> Response {
    answered(read_knowledge(&panel, &agent, &query).await)
}

/// What [`knowledge`] answers; the page renders it too.
pub(crate) async fn read_knowledge(
    panel: &Panel,
    agent: &str,
    query: &KnowledgeQuery,
) -> Result<Value, Refusal> {
    let store = store_of(panel, agent)?;
    let scope = Scope::operator(agent, OPERATOR);
    let failed = |error: String| (StatusCode::BAD_GATEWAY, error);
    if let Some(q) = query.q.as_deref().filter(|q| !q.trim().is_empty()) {
        let hits = store
            .search(&scope, q, query.limit.unwrap_or(PAGE))
            .await
            .map_err(|error| (StatusCode::BAD_REQUEST, error.to_string()))?;
        return Ok(json!({ "query": q, "hits": hits }));
    }
    let after = query.after.clone().map(ListCursor::after);
    let listing = store
        .list(&scope, query.limit.unwrap_or(PAGE), after.as_ref())
        .await
        .map_err(|error| failed(error.to_string()))?;
    Ok(serde_json::to_value(listing).expect("a listing serializes"))
}

#[derive(Deserialize)]
struct NewDocument {
    filename: String,
    content: String,
}

/// `POST /v1/admin/agents/{agent}/knowledge`: `{"filename", "content"}` in JSON, or a
/// form's `file` (multipart): the document written as the operator `panel`, over one of
/// the same name.
async fn upload(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    session: Option<Extension<Session>>,
    request: Request,
) -> Response {
    let multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("multipart/form-data"));
    let (document, via) = if multipart {
        match uploaded_file(request).await {
            Ok((document, back)) => (document, Via::Form { back }),
            // A form that does not parse still goes back to its page, saying why.
            Err(error) => (
                Err(error),
                Via::Form {
                    back: format!("/agents/{}/knowledge", super::segment(&agent)),
                },
            ),
        }
    } else {
        match Submitted::<NewDocument>::from_request(request, &()).await {
            Ok(Submitted { payload, via }) => (Ok(payload), via),
            Err(refused) => return refused,
        }
    };
    let outcome = match document {
        Ok(document) => written(&panel, &agent, document).await,
        Err(error) => Err((StatusCode::BAD_REQUEST, error)),
    };
    via.answer(&panel, session.as_deref(), outcome)
}

/// The `file` and `back` fields of a multipart form: the document, or why the file is
/// not one (the form still goes back to its page).
async fn uploaded_file(request: Request) -> Result<(Result<NewDocument, String>, String), String> {
    let mut multipart = Multipart::from_request(request, &())
        .await
        .map_err(|error| error.body_text())?;
    let (mut file, mut back) = (None, None);
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|error| error.body_text())?
    {
        match field.name() {
            Some("file") => {
                let filename = field.file_name().unwrap_or_default().to_owned();
                let bytes = field.bytes().await.map_err(|error| error.body_text())?;
                file = Some((filename, bytes));
            }
            Some("back") => back = Some(field.text().await.map_err(|error| error.body_text())?),
            _ => {}
        }
    }
    let back = local_path(back.as_deref()).to_owned();
    let document = match file {
        None => Err("the form has no `file`".to_owned()),
        Some((filename, bytes)) => match String::from_utf8(bytes.to_vec()) {
            Ok(content) => Ok(NewDocument { filename, content }),
            Err(_) => Err(format!(
                "{filename} is not UTF-8 text: documents are text or Markdown"
            )),
        },
    };
    Ok((document, back))
}

async fn written(panel: &Panel, agent: &str, document: NewDocument) -> Outcome {
    let store = store_of(panel, agent)?;
    let name = document.filename.trim();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err((
            StatusCode::BAD_REQUEST,
            "a document's name is not empty and holds no control characters".to_owned(),
        ));
    }
    let scope = Scope::operator(agent, OPERATOR);
    match store.write(&scope, name, &document.content).await {
        Ok(written) => Ok((
            format!(
                "{} {}",
                if written.created {
                    "created"
                } else {
                    "updated"
                },
                written.document.filename
            ),
            serde_json::to_value(written).expect("a mutation serializes"),
        )),
        Err(refusal) => Err((StatusCode::UNPROCESSABLE_ENTITY, refusal.to_string())),
    }
}

#[derive(Deserialize)]
struct Nothing {}

/// `POST /v1/admin/agents/{agent}/knowledge/{id}/delete`.
async fn delete(
    State(panel): State<Panel>,
    Path((agent, id)): Path<(String, i64)>,
    session: Option<Extension<Session>>,
    submitted: Submitted<Nothing>,
) -> Response {
    let outcome = async {
        let store = store_of(&panel, &agent)?;
        match store.delete(&Scope::operator(&agent, OPERATOR), id).await {
            Ok(deleted) => Ok((
                format!("deleted {}", deleted.document.filename),
                serde_json::to_value(deleted).expect("a mutation serializes"),
            )),
            Err(refusal) => Err((StatusCode::UNPROCESSABLE_ENTITY, refusal.to_string())),
        }
    }
    .await;
    submitted.via.answer(&panel, session.as_deref(), outcome)
}

#[derive(Deserialize)]
struct Wipe {
    /// The agent's name, typed again: a wipe cannot be undone.
    confirm: String,
}

/// `POST /v1/admin/agents/{agent}/knowledge/wipe` `{"confirm": "<agent>"}`: deletes every
/// document of the agent (seed 003: a panel operation, never a tool's).
async fn wipe(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    session: Option<Extension<Session>>,
    submitted: Submitted<Wipe>,
) -> Response {
    let Submitted { payload, via } = submitted;
    let outcome = async {
        if payload.confirm != agent {
            return Err((
                StatusCode::BAD_REQUEST,
                format!("nothing wiped: `confirm` must be the agent's name, `{agent}`"),
            ));
        }
        let store = store_of(&panel, &agent)?;
        match store.wipe(&agent).await {
            Ok(count) => Ok((
                format!("wiped {count} documents"),
                json!({ "wiped": count }),
            )),
            Err(refusal) => Err((StatusCode::UNPROCESSABLE_ENTITY, refusal.to_string())),
        }
    }
    .await;
    via.answer(&panel, session.as_deref(), outcome)
}
