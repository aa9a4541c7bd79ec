//! Appointments and orders in the Acme back office: the authoring example of the plugin design.

use plugin_sdk::prelude::*;

plugin_sdk::plugin! {
    namespace = "acme",
    engine = ">=0.1, <2",
    display_name = "Acme",
    description = {
        "en-US": "Order status and appointments from the Acme back office.",
        "it-IT": "Stato degli ordini e appuntamenti dal gestionale Acme.",
    },
    long_description_file = {
        "en-US": "catalogue/about.md",
        "it-IT": "catalogue/about.it.md",
    },
    icon = "catalogue/icon.svg",
    category = { "en-US": "Back office", "it-IT": "Gestionale" },
    publisher = "Acme Inc.",
    documentation_url = "https://docs.acme.example/agent-plugin",
    state = Crm,
    // The CRM client speaks TLS: an image carrying this plugin installs the CA roots.
    system = { debian = ["ca-certificates"], env = { ACME_CRM_TIMEOUT_SECS = "10" } },
}

/// Where an agent's Acme CRM is: `[agents.<agent>.plugins.acme]`, beside its secrets.
///
/// ```toml
/// [agents.support.plugins.acme]
/// base_url = "https://crm.acme.example"
/// region = "eu"
/// ```
#[derive(Debug, Deserialize)]
pub struct CrmSettings {
    /// The CRM's address: https, or http on loopback for a local one.
    pub base_url: String,
    /// The data region the account lives in.
    pub region: Region,
}

/// A CRM data region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    Eu,
    Us,
}

/// The CRM client the tools share, built once per agent from its settings: a real plugin
/// keeps its HTTP client (and its connection pool) here.
#[derive(Debug)]
pub struct Crm {
    /// The base URL with the region's path, without a trailing `/`.
    contacts: String,
}

impl PluginState for Crm {
    type Settings = CrmSettings;

    fn build(settings: CrmSettings) -> Result<Self, String> {
        let base = settings.base_url.trim_end_matches('/');
        // The host is what stands between `://` and the first `/`, `?` or `#`, before the
        // port; any `user@` is refused: `http://localhost@evil.example` is not local.
        let local = base.strip_prefix("http://").is_some_and(|rest| {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let host = match authority.strip_prefix('[') {
                Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
                None => authority.split(':').next().unwrap_or_default(),
            };
            !authority.contains('@') && ["127.0.0.1", "localhost", "::1"].contains(&host)
        });
        if !(base.starts_with("https://") || local) {
            return Err(format!(
                "`base_url` is `{}`: give an https:// URL (or http:// on loopback)",
                settings.base_url
            ));
        }
        let region = match settings.region {
            Region::Eu => "eu",
            Region::Us => "us",
        };
        Ok(Self {
            contacts: format!("{base}/{region}/contacts"),
        })
    }
}

/// The arguments of `book_appointment`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct BookAppointment {
    /// The patient's id in the CRM, such as `p-1042`.
    pub patient_id: String,
    /// Day of the appointment, ISO 8601 (`2026-12-01`).
    pub date: String,
    /// Free note for the clinic; null when there is none.
    pub note: Option<String>,
}

/// A booked appointment.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Booking {
    /// The booking's id, stable for the same patient and day.
    pub id: String,
    pub patient_id: String,
    pub date: String,
    pub note: Option<String>,
}

/// Book an appointment in the CRM for a patient on a day. Booking the same patient on
/// the same day again returns the same booking.
#[define_tool(
    summary = {
        "en-US": "Books an appointment in the CRM.",
        "it-IT": "Prenota un appuntamento nel CRM.",
    },
    category = "crm",
    idempotent,
    example = r#"{ "patient_id": "p-1042", "date": "2026-12-01", "note": null }"#,
    example = r#"{ "patient_id": "p-7", "date": "2027-01-15", "note": "Needs a wheelchair ramp." }"#,
)]
pub async fn book_appointment(args: BookAppointment) -> Result<Booking, ToolError> {
    let date = parse_iso_date(&args.date)?;
    if args.patient_id.trim().is_empty() {
        return Err(ToolError::invalid_arguments(
            "`patient_id` is empty: pass the patient's CRM id, such as `p-1042`",
        ));
    }
    Ok(Booking {
        id: format!("bk-{}-{}", args.patient_id, date.replace('-', "")),
        patient_id: args.patient_id,
        date,
        note: args.note.filter(|note| !note.trim().is_empty()),
    })
}

/// Checks `YYYY-MM-DD` (strict mode has no `format`, so the body validates).
fn parse_iso_date(text: &str) -> Result<String, ToolError> {
    let invalid = || {
        ToolError::invalid_arguments(format!(
            "`date` must be an ISO 8601 day such as `2026-12-01`, not `{text}`"
        ))
    };
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return Err(invalid());
    };
    let number = |part: &str, len: usize| {
        (part.len() == len && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u32>().ok())
            .flatten()
    };
    let (Some(_), Some(month), Some(day)) = (number(year, 4), number(month, 2), number(day, 2))
    else {
        return Err(invalid());
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(invalid());
    }
    Ok(text.to_owned())
}

/// Where an order is in its life.
#[derive(Debug, Deserialize, Serialize, JsonSchema, ToolArgs, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum OrderState {
    Received,
    Shipped,
    Delivered,
    Returned,
}

/// The arguments of `find_orders`.
#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
pub struct FindOrders {
    /// The customer's id, such as `c-12`.
    pub customer_id: String,
    /// Only orders in this state; null for every state.
    pub state: Option<OrderState>,
}

/// One order.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct Order {
    pub order_id: String,
    pub state: OrderState,
}

/// List a customer's orders, optionally only those in one state.
#[define_tool(
    summary = { "en-US": "Lists a customer's orders.", "it-IT": "Elenca gli ordini di un cliente." },
    category = "orders",
    read_only,
    example = r#"{ "customer_id": "c-12", "state": "shipped" }"#,
)]
pub async fn find_orders(args: FindOrders, ctx: &ToolContext) -> Vec<Order> {
    let _ = ctx;
    const BOOK: &[(&str, &str, OrderState)] = &[
        ("c-12", "o-1001", OrderState::Delivered),
        ("c-12", "o-1002", OrderState::Shipped),
        ("c-12", "o-1003", OrderState::Returned),
        ("c-40", "o-2001", OrderState::Received),
    ];
    BOOK.iter()
        .filter(|(customer, _, state)| {
            *customer == args.customer_id && args.state.is_none_or(|wanted| wanted == *state)
        })
        .map(|(_, order_id, state)| Order {
            order_id: (*order_id).to_owned(),
            state: *state,
        })
        .collect()
}

/// The key of the Acme CRM account the tools work in.
#[derive(Secrets)]
pub struct CrmSecrets {
    /// The API key.
    #[secret(
        label = { "en-US": "CRM API key", "it-IT": "Chiave API del CRM" },
        description = { "en-US": "Key of the CRM account the contact cards are read from.", "it-IT": "Chiave dell'account CRM da cui si leggono le schede contatto." },
    )]
    pub crm_api_key: Secret,
}

/// A contact card.
#[derive(Debug, Serialize, JsonSchema, PartialEq)]
pub struct ContactCard {
    /// The customer's id in the CRM.
    pub customer_id: String,
    /// How the customer prefers to be reached.
    pub channel: String,
    /// Where the card is in the CRM.
    pub link: String,
}

/// Fetch the contact card of the customer this conversation is with. Takes no
/// arguments: the customer is the conversation's, never one the model names.
#[define_tool(
    summary = { "en-US": "Reads the customer's contact card.", "it-IT": "Legge la scheda contatto del cliente." },
    category = "crm",
    read_only,
    open_world,
)]
pub async fn contact_card(
    secrets: CrmSecrets,
    crm: Shared<Crm>,
    customer: Subscriber,
    audit: &Audit,
) -> ContactCard {
    // A real plugin sends the key in an Authorization header; here it picks the channel.
    let channel = if secrets.crm_api_key.expose().len().is_multiple_of(2) {
        "email"
    } else {
        "phone"
    };
    audit.record("contact_card_read", customer.id());
    ContactCard {
        customer_id: customer.id().to_owned(),
        channel: channel.to_owned(),
        link: format!("{}/{}", crm.contacts, customer.id()),
    }
}

/// When the user mentions an order, tells the model how Acme order and customer ids look,
/// so that it asks for the customer id `find_orders` needs instead of guessing one.
#[define_hook(
    event = "message_received",
    summary = { "en-US": "Explains Acme ids when orders come up.", "it-IT": "Spiega gli identificativi Acme quando si parla di ordini." },
)]
pub fn order_ids_hint(event: &MessageReceived) -> PreModelOutcome {
    if event.message().to_lowercase().contains("order") {
        PreModelOutcome::InjectContext(ORDER_IDS_HINT.into())
    } else {
        PreModelOutcome::Observe
    }
}

/// The context `order_ids_hint` injects.
pub const ORDER_IDS_HINT: &str = "Acme customer ids look like `c-12` and order ids like `o-1001`. To list orders, ask the user for their customer id if you do not have it.";

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_sdk::hook::Turn;

    #[test]
    fn the_contact_card_is_the_conversations_customers() {
        let ctx = ToolContext::new()
            .with_turn("c-12", "conversation-1")
            .with_secret("crm_api_key", Secret::new("key-1234"))
            .with_plugin_state(Shared::new(crm("https://crm.acme.example/", "eu").unwrap()));
        let input = plugin_sdk::engine::CallInput::new("{}", &ctx);
        let tool = plugin_sdk::engine::linked_tools()
            .find(|tool| tool.name == "contact_card")
            .expect("linked");
        let output = run(tool.call(input)).unwrap();
        assert_eq!(
            output,
            r#"{"customer_id":"c-12","channel":"email","link":"https://crm.acme.example/eu/contacts/c-12"}"#
        );
    }

    fn crm(base_url: &str, region: &str) -> Result<Crm, String> {
        let settings = serde_json::json!({ "base_url": base_url, "region": region });
        Crm::build(serde_json::from_value(settings).map_err(|error| error.to_string())?)
    }

    #[test]
    fn the_crm_is_reached_over_https_or_on_loopback_only() {
        assert!(crm("https://crm.acme.example", "us").is_ok());
        assert!(crm("http://127.0.0.1:9000", "eu").is_ok());
        let error = crm("http://crm.acme.example", "eu").unwrap_err();
        assert!(error.contains("give an https:// URL"), "{error}");
        assert!(crm("http://localhost.evil.example", "eu").is_err());
        assert!(crm("http://localhost:80@evil.example", "eu").is_err());
        assert!(crm("http://[::1]:8080/crm", "eu").is_ok());
        assert!(crm("http://localhost", "eu").is_ok());
        assert!(crm("https://crm.acme.example", "mars").is_err());
    }

    #[test]
    fn the_order_hint_comes_only_when_orders_come_up() {
        let asked = |text: &str| order_ids_hint(&MessageReceived::new(Turn::new("c"), text));
        assert_eq!(
            asked("Where is my Order?"),
            PreModelOutcome::InjectContext(ORDER_IDS_HINT.into())
        );
        assert_eq!(asked("Book me a visit"), PreModelOutcome::Observe);
    }

    fn run<F: std::future::Future>(future: F) -> F::Output {
        // The tools never wait on anything, so one poll completes them.
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        match std::pin::pin!(future).poll(&mut context) {
            std::task::Poll::Ready(output) => output,
            std::task::Poll::Pending => unreachable!("the example tools never wait"),
        }
    }

    #[test]
    fn booking_is_stable_for_the_same_patient_and_day() {
        let args = || BookAppointment {
            patient_id: "p-1".into(),
            date: "2026-12-01".into(),
            note: Some(" ".into()),
        };
        let first = run(book_appointment(args())).unwrap();
        assert_eq!(first, run(book_appointment(args())).unwrap());
        assert_eq!(first.id, "bk-p-1-20261201");
        assert_eq!(first.note, None, "a blank note is no note");
    }

    #[test]
    fn booking_rejects_a_date_that_is_not_iso() {
        let args = BookAppointment {
            patient_id: "p-1".into(),
            date: "01/12/2026".into(),
            note: None,
        };
        let error = run(book_appointment(args)).unwrap_err();
        assert!(error.message().contains("ISO 8601"), "{error}");
    }

    #[test]
    fn orders_filter_by_state() {
        let ctx = ToolContext::new();
        let shipped = run(find_orders(
            FindOrders {
                customer_id: "c-12".into(),
                state: Some(OrderState::Shipped),
            },
            &ctx,
        ));
        assert_eq!(
            shipped,
            [Order {
                order_id: "o-1002".into(),
                state: OrderState::Shipped
            }]
        );
        let all = run(find_orders(
            FindOrders {
                customer_id: "c-12".into(),
                state: None,
            },
            &ctx,
        ));
        assert_eq!(all.len(), 3);
    }
}
