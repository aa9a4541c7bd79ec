//! The panel's pages, rendered by the server from the [`views`](super::views) and the
//! admin API's answers: each a `GET` that changes nothing; their forms post to the admin
//! API.

pub(crate) mod layout;
pub(crate) mod login;

mod chat;
mod conversations;
mod extensions;
mod knowledge;
mod secrets;
mod tools;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Extension, Router};

use super::admin::{
    conversations_page, history, knowledge_page, ConversationsQuery, HistoryQuery, KnowledgeQuery,
};
use super::locale::{self, Locale};
use super::segment;
use super::session::Session;
use super::{views, Panel};
use layout::{Frame, Section};

/// The header the panel's script sends when it fetches a page again to follow a change.
const REFRESH_HEADER: &str = "x-panel-refresh";

pub(crate) fn router() -> Router<Panel> {
    Router::new()
        .route("/", get(home))
        .route("/locale", get(locale::switch))
        .route("/extensions", get(extensions_page))
        .route("/agents/{agent}/tools", get(tools_page))
        .route("/agents/{agent}/chat", get(chat_page))
        .route("/agents/{agent}/knowledge", get(knowledge_page_html))
        .route("/agents/{agent}/secrets", get(secrets_page))
        .route(
            "/agents/{agent}/conversations",
            get(conversations_page_html),
        )
        .route("/agents/{agent}/conversations/{id}", get(history_page))
}

/// What a page handler is given: the panel, the reader, the session, where it is.
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

impl Asked {
    fn new(
        panel: Panel,
        locale: Locale,
        session: Option<Extension<Session>>,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Self {
        let agents = views::agents(&panel.engine);
        Self {
            refresh: headers.contains_key(REFRESH_HEADER),
            panel,
            locale,
            session: session.map(|Extension(session)| session),
            here: uri
                .path_and_query()
                .map_or("/", |path| path.as_str())
                .to_owned(),
            agents,
        }
    }

    fn frame<'a>(&'a self, current: Option<(&'a str, Section)>) -> Frame<'a> {
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
            .frame(None)
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

async fn tools_page(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    let view = views::agent_tools(
        &asked.panel.engine,
        &found,
        &asked.locale,
        asked.panel.config.is_some(),
    );
    tools::render(&asked.frame(Some((&agent, Section::Tools))), &view)
}

async fn chat_page(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    chat::render(
        &asked.frame(Some((&agent, Section::Chat))),
        &agent,
        found.config().turn.is_some(),
    )
}

async fn knowledge_page_html(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    Query(query): Query<KnowledgeQuery>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let answer = knowledge_page(&asked.panel, &agent, &query)
        .await
        .map_err(|(_, message)| message);
    knowledge::render(
        &asked.frame(Some((&agent, Section::Knowledge))),
        &agent,
        answer,
        query.q.as_deref(),
    )
}

async fn secrets_page(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    let Some(found) = asked.panel.engine.agent(&agent) else {
        return asked.no_agent(&agent);
    };
    let view = views::agent_secrets(
        &asked.panel.engine,
        &found,
        &asked.locale,
        asked.panel.config.is_some(),
    );
    secrets::render(&asked.frame(Some((&agent, Section::Secrets))), &view)
}

async fn conversations_page_html(
    State(panel): State<Panel>,
    Path(agent): Path<String>,
    Query(query): Query<ConversationsQuery>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let page = conversations_page(&asked.panel, &agent, &query)
        .await
        .map_err(|(_, message)| message);
    conversations::list(
        &asked.frame(Some((&agent, Section::Conversations))),
        &agent,
        page,
    )
}

async fn history_page(
    State(panel): State<Panel>,
    Path((agent, id)): Path<(String, String)>,
    Query(query): Query<HistoryQuery>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    if asked.panel.engine.agent(&agent).is_none() {
        return asked.no_agent(&agent);
    }
    let found = history(&asked.panel, &agent, &id, &query)
        .await
        .map_err(|(_, message)| message);
    let limit = query
        .limit
        .unwrap_or(100)
        .clamp(1, super::admin::MAX_MESSAGES_PAGE);
    conversations::history(
        &asked.frame(Some((&agent, Section::Conversations))),
        &agent,
        &id,
        found,
        limit,
    )
}

async fn extensions_page(
    State(panel): State<Panel>,
    locale: Locale,
    session: Option<Extension<Session>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let asked = Asked::new(panel, locale, session, &uri, &headers);
    let status = crate::extensions::status(&asked.panel.engine);
    extensions::render(&asked.frame(Some(("", Section::Extensions))), &status)
}
