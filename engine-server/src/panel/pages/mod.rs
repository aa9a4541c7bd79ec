//! The panel's pages, rendered by the server from the [`views`](super::views) and the
//! admin API's answers: each a `GET` that changes nothing; their forms post to the admin
//! API.

mod layout;
pub(crate) mod login;

mod chat;
mod conversations;
mod extensions;
mod knowledge;
mod secrets;
mod tools;

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use super::admin::{
    read_conversations, read_history, read_knowledge, ConversationsQuery, HistoryQuery,
    KnowledgeQuery,
};
use super::locale::{self, Locale};
use super::segment;
use super::session::Session;
use super::{views, Panel};
use layout::{Frame, Place, Section};

/// The header the panel's script sends when it fetches a page again to follow a change.
const REFRESH_HEADER: &str = "x-panel-refresh";

pub(crate) fn router() -> Router<Panel> {
    Router::new()
        .route("/", get(home))
        .route("/locale", get(locale::switch))
        .route("/extensions", get(extensions_page))
        .route("/agents/{agent}/tools", get(tools_page))
        .route("/agents/{agent}/chat", get(chat_page))
        .route("/agents/{agent}/knowledge", get(knowledge_page))
        .route("/agents/{agent}/secrets", get(secrets_page))
        .route("/agents/{agent}/conversations", get(conversations_page))
        .route("/agents/{agent}/conversations/{id}", get(history_page))
}

/// What a page handler is given (an extractor): the panel, the reader, the session,
/// where it is, the agents for the menu.
struct Asked {
    /// Whether the panel's script asked for the page again to follow a change: the
    /// session's message is then left for the page the person asks for.
    refresh: bool,
    panel: Panel,
    locale: Locale,
    session: Option<Session>,
    here: String,
    agents: Vec<views::AgentSummary>,
}

impl FromRequestParts<Panel> for Asked {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, panel: &Panel) -> Result<Self, Self::Rejection> {
        let locale = Locale::from_request_parts(parts, panel).await?;
        Ok(Self {
            refresh: parts.headers.contains_key(REFRESH_HEADER),
            panel: panel.clone(),
            locale,
            session: parts.extensions.get::<Session>().cloned(),
            here: parts
                .uri
                .path_and_query()
                .map_or("/", |path| path.as_str())
                .to_owned(),
            agents: views::agents(&panel.engine),
        })
    }
}

impl Asked {
    fn frame<'a>(&'a self, current: Place<'a>) -> Frame<'a> {
        Frame {
            locale: &self.locale,
            session: self.session.as_ref(),
            flash: self
                .session
                .as_ref()
                .filter(|_| !self.refresh)
                .and_then(|session| self.panel.sessions.take_flash(session)),
            agents: &self.agents,
            current,
            here: &self.here,
        }
    }

    /// The page that says no agent is named `name`.
    fn no_agent(&self, name: &str) -> Response {
        let mut page = self
            .frame(Place::Elsewhere)
            .page(&format!("no agent is named `{name}`"), maud::html! {});
        *page.status_mut() = axum::http::StatusCode::NOT_FOUND;
        page
    }
}

/// The first agent's tools.
async fn home(State(panel): State<Panel>) -> Response {
    match panel.engine.agents().first() {
        Some(agent) => {
            Redirect::to(&format!("/agents/{}/tools", segment(agent.name()))).into_response()
        }
        None => Redirect::to("/extensions").into_response(),
    }
}

async fn tools_page(Path(agent): Path<String>, asked: Asked) -> Response {
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    let view = views::agent_tools(
        &asked.panel.engine,
        &found,
        &asked.locale,
        asked.panel.configuration.is_some(),
    );
    tools::render(&asked.frame(Place::Agent(&agent, Section::Tools)), &view)
}

async fn chat_page(Path(agent): Path<String>, asked: Asked) -> Response {
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    chat::render(
        &asked.frame(Place::Agent(&agent, Section::Chat)),
        &agent,
        found.config().turn.is_some(),
    )
}

async fn knowledge_page(
    Path(agent): Path<String>,
    Query(query): Query<KnowledgeQuery>,
    asked: Asked,
) -> Response {
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let answer = read_knowledge(&asked.panel, &agent, &query)
        .await
        .map_err(|(_, message)| message);
    knowledge::render(
        &asked.frame(Place::Agent(&agent, Section::Knowledge)),
        &agent,
        answer,
        query.q.as_deref(),
    )
}

async fn secrets_page(Path(agent): Path<String>, asked: Asked) -> Response {
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    let view = views::agent_secrets(
        &asked.panel.engine,
        &found,
        &asked.locale,
        asked.panel.configuration.is_some(),
    );
    secrets::render(&asked.frame(Place::Agent(&agent, Section::Secrets)), &view)
}

async fn conversations_page(
    Path(agent): Path<String>,
    Query(query): Query<ConversationsQuery>,
    asked: Asked,
) -> Response {
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let page = read_conversations(&asked.panel, &agent, &query)
        .await
        .map_err(|(_, message)| message);
    conversations::list(
        &asked.frame(Place::Agent(&agent, Section::Conversations)),
        &agent,
        page,
    )
}

async fn history_page(
    Path((agent, id)): Path<(String, String)>,
    Query(query): Query<HistoryQuery>,
    asked: Asked,
) -> Response {
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let found = read_history(&asked.panel, &agent, &id, &query)
        .await
        .map_err(|(_, message)| message);
    let limit = query.limit();
    conversations::history(
        &asked.frame(Place::Agent(&agent, Section::Conversations)),
        &agent,
        &id,
        found,
        limit,
    )
}

async fn extensions_page(asked: Asked) -> Response {
    let status = crate::extensions::status(&asked.panel.engine);
    extensions::render(&asked.frame(Place::Extensions), &status)
}
