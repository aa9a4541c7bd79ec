//! The reader's locale and the panel's own words in it (en-US and it-IT): chosen with
//! the language switcher (a cookie), else from `Accept-Language`, else `en-US`. The
//! plugins' texts resolve it with their own fallback chain (their tag, the same
//! language, English, the first).

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Redirect, Response};
use engine_mcp::preferred_language;
use serde::Deserialize;

use crate::cookies::{cookie, set_cookie};

/// The cookie the switcher sets.
const COOKIE: &str = "engine_lang";

/// The locales the panel's own words are written in, the first the default.
pub(crate) const LOCALES: [(&str, &str); 2] = [("en-US", "English"), ("it-IT", "Italiano")];

/// The reader's locale (an extractor).
#[derive(Clone, Debug)]
pub(crate) struct Locale {
    tag: String,
}

impl Locale {
    fn new(tag: &str) -> Self {
        Self {
            tag: if plausible(tag) { tag } else { LOCALES[0].0 }.to_owned(),
        }
    }

    /// The reader's tag, as given (a plugin may have texts for it that the panel has not).
    pub(crate) fn tag(&self) -> &str {
        &self.tag
    }

    fn italian(&self) -> bool {
        self.tag
            .split(['-', '_'])
            .next()
            .is_some_and(|language| language.eq_ignore_ascii_case("it"))
    }

    /// The panel's word for `text`.
    pub(crate) fn text(&self, text: Text) -> &'static str {
        if self.italian() {
            text.it()
        } else {
            text.en()
        }
    }

    /// A category id as a person reads it: translated when the panel knows it, else
    /// humanized; no id is "Uncategorized".
    pub(crate) fn category(&self, id: Option<&str>) -> String {
        let Some(id) = id else {
            return self.text(Text::Uncategorized).to_owned();
        };
        let known = KNOWN_CATEGORIES
            .iter()
            .find(|(known, _, _)| *known == id)
            .map(|(_, en, it)| if self.italian() { *it } else { *en });
        known.map_or_else(|| humanized(id), str::to_owned)
    }

    fn from_headers(headers: &HeaderMap) -> Self {
        let chosen = cookie(headers, COOKIE).map(str::to_owned);
        let asked = || {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|value| value.to_str().ok())
                .and_then(|accept| preferred_language(accept, plausible))
        };
        Self::new(&chosen.or_else(asked).unwrap_or_default())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Locale {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::from_headers(&parts.headers))
    }
}

/// Whether `tag` looks like a BCP 47 tag: what the panel writes into pages and cookies.
fn plausible(tag: &str) -> bool {
    (2..=35).contains(&tag.len())
        && tag
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
        && tag.as_bytes()[0].is_ascii_alphabetic()
}

#[derive(Deserialize)]
pub(crate) struct LanguageChoice {
    lang: String,
    #[serde(default)]
    next: Option<String>,
}

/// `GET /locale?lang=it-IT&next=/...`: the switcher; a preference, so a link may set it.
pub(crate) async fn switch(headers: HeaderMap, Query(switch): Query<LanguageChoice>) -> Response {
    let next = super::local_path(switch.next.as_deref());
    let mut response = Redirect::to(next).into_response();
    if plausible(&switch.lang) {
        response.headers_mut().insert(
            header::SET_COOKIE,
            set_cookie(&headers, COOKIE, &switch.lang, Some(365 * 24 * 3600)),
        );
    }
    response
}

/// `crm_sync` as `Crm sync`: an id a person reads, when there is no text for it.
pub(crate) fn humanized(id: &str) -> String {
    let spaced = id.replace(['_', '-'], " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The category ids the panel translates (seed 003: "the panel translates the ids it
/// knows and humanizes the others").
const KNOWN_CATEGORIES: [(&str, &str, &str); 12] = [
    ("calendar", "Calendar", "Calendario"),
    ("crm", "CRM", "CRM"),
    ("email", "Email", "Email"),
    ("files", "Files", "File"),
    ("finance", "Finance", "Finanza"),
    ("knowledge", "Knowledge", "Conoscenza"),
    ("messaging", "Messaging", "Messaggi"),
    ("notes", "Notes", "Note"),
    ("orders", "Orders", "Ordini"),
    ("search", "Search", "Ricerca"),
    ("weather", "Weather", "Meteo"),
    ("web", "Web", "Web"),
];

macro_rules! texts {
    ($($name:ident => $en:literal, $it:literal;)*) => {
        /// The panel's own words.
        #[derive(Clone, Copy, Debug)]
        pub(crate) enum Text { $($name,)* }

        impl Text {
            fn en(self) -> &'static str {
                match self { $(Self::$name => $en,)* }
            }
            fn it(self) -> &'static str {
                match self { $(Self::$name => $it,)* }
            }
        }
    };
}

texts! {
    Agents => "Agents", "Agenti";
    Apply => "Apply", "Applica";
    ChatNeedsScript => "The chat streams its reply: it needs JavaScript.", "La chat trasmette la risposta mentre arriva: serve JavaScript.";
    MutatesResponse => "mutates the response", "modifica la risposta";
    Requests => "requests", "richieste";
    TokensIn => "tokens in", "token in ingresso";
    TokensOut => "tokens out", "token in uscita";
    Actions => "Staged actions", "Azioni differite";
    Call => "call", "chiamata";
    Chat => "Chat", "Chat";
    Conversation => "Conversation", "Conversazione";
    Conversations => "Conversations", "Conversazioni";
    ConversationsNone => "No conversation yet.", "Ancora nessuna conversazione.";
    Cost => "Cost", "Costo";
    Messages => "Messages", "Messaggi";
    Newer => "Newer", "Più recenti";
    Older => "Older", "Meno recenti";
    Stop => "How it ended", "Come è finito";
    Turns => "Turns", "Turni";
    Usage => "Usage", "Consumo";
    ConfigNotEditable => "The engine was not started from a configuration file: the switches cannot write one.", "Il motore non è stato avviato da un file di configurazione: gli interruttori non possono scriverne uno.";
    Delete => "Delete", "Elimina";
    Destructive => "destructive", "distruttivo";
    Disable => "Disable", "Disattiva";
    Disabled => "disabled", "disattivato";
    Documents => "Documents", "Documenti";
    Enable => "Enable", "Attiva";
    Equipped => "equipped", "in dotazione";
    Extensions => "Extensions", "Estensioni";
    ExtensionsEmpty => "No file in the extensions directory.", "Nessun file nella cartella delle estensioni.";
    File => "File", "File";
    Hooks => "Hooks", "Hook";
    HooksNone => "No hook runs for this agent.", "Nessun hook per questo agente.";
    Idempotent => "idempotent", "idempotente";
    InConversation => "in a conversation only", "solo in una conversazione";
    Knowledge => "Knowledge", "Conoscenza";
    Language => "Language", "Lingua";
    LeftOut => "left out", "escluso";
    Message => "Message", "Messaggio";
    More => "More", "Altri";
    Name => "Name", "Nome";
    NoDocuments => "No documents.", "Nessun documento.";
    NoTurns => "This agent runs no turns (it has no `turn` configuration).", "Questo agente non esegue turni (non ha una configurazione `turn`).";
    OpenWorld => "open world", "mondo aperto";
    Origin => "Origin", "Origine";
    Provides => "Tools it offers", "Strumenti offerti";
    ReadOnly => "read-only", "sola lettura";
    Search => "Search", "Cerca";
    Secrets => "Secrets", "Segreti";
    Save => "Save", "Salva";
    Clear => "Clear", "Rimuovi";
    DeclaredBy => "declared by", "dichiarato da";
    SecretsNone => "No linked tool or hook declares a secret.", "Nessuno strumento o hook collegato dichiara un segreto.";
    SecretsNotEditable => "The engine was not started from a configuration file: set secrets in its environment.", "Il motore non è stato avviato da un file di configurazione: imposta i segreti nel suo ambiente.";
    SourceEnvironment => "set by the environment, which wins over the panel", "impostato dall'ambiente, che prevale sul pannello";
    SourceFile => "set in the configuration file", "impostato nel file di configurazione";
    SourcePanel => "set in the panel", "impostato nel pannello";
    SecretSet => "set", "impostato";
    SecretUnset => "not set", "non impostato";
    Send => "Send", "Invia";
    SignIn => "Sign in", "Accedi";
    SignOut => "Sign out", "Esci";
    Size => "Size", "Dimensione";
    StagedAction => "staged action", "azione differita";
    State => "State", "Stato";
    Subscriber => "Subscriber", "Utente";
    Token => "The server's token", "Il token del server";
    TokenRefused => "That is not the server's token.", "Questo non è il token del server.";
    Tools => "Tools", "Strumenti";
    Uncategorized => "Uncategorized", "Senza categoria";
    Upload => "Upload", "Carica";
    UploadHint => "A text or Markdown file.", "Un file di testo o Markdown.";
    Wipe => "Wipe all documents", "Cancella tutti i documenti";
    WipeConfirm => "Type the agent's name to confirm", "Scrivi il nome dell'agente per confermare";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(value: &str) -> Locale {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_LANGUAGE, value.parse().unwrap());
        Locale::from_headers(&headers)
    }

    #[test]
    fn accept_language_gives_the_most_wanted_plausible_tag() {
        assert_eq!(accepting("it-IT,it;q=0.9,en;q=0.8").tag(), "it-IT");
        assert_eq!(accepting("en;q=0.5, it-IT;q=0.9").tag(), "it-IT");
        assert_eq!(accepting("*;q=1, fr-CA").tag(), "fr-CA");
        assert_eq!(accepting("<script>").tag(), "en-US");
        assert_eq!(Locale::from_headers(&HeaderMap::new()).tag(), "en-US");
    }

    #[test]
    fn the_switchers_cookie_wins_over_accept_language() {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_LANGUAGE, "en-US".parse().unwrap());
        headers.insert(header::COOKIE, "engine_lang=it-IT".parse().unwrap());
        let locale = Locale::from_headers(&headers);
        assert_eq!(locale.text(Text::Tools), "Strumenti");
    }

    #[test]
    fn ids_are_humanized_with_spaces_and_a_capital() {
        assert_eq!(humanized("crm_sync"), "Crm sync");
        assert_eq!(humanized("back-office"), "Back office");
        assert_eq!(humanized("émail"), "Émail");
        assert_eq!(humanized(""), "");
    }

    #[test]
    fn known_categories_are_translated_and_others_humanized() {
        let italian = Locale::new("it-IT");
        assert_eq!(italian.category(Some("calendar")), "Calendario");
        assert_eq!(italian.category(Some("back_office")), "Back office");
        assert_eq!(italian.category(None), "Senza categoria");
        assert_eq!(Locale::new("en-GB").category(Some("files")), "Files");
    }
}
