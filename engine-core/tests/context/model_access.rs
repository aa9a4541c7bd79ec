//! Model access, through a provider double on a real socket: by tier, with the answer's
//! length bounded, reserved on the turn's, the session's and the agent's caps before it
//! runs (so concurrent calls never pass a cap), stopped at the tool's deadline and on
//! cancellation, and charged what it may have cost when cut.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::IntoResponse;
use engine_core::{Call, CallErrorKind, Engine};
use serde_json::{json, Value};

use crate::support::{call, engine, in_conversation};

/// Each call's input is priced at 10 tokens, and its output at the whole `max_tokens` it
/// was sent: the most it may cost, but for the input bound.
const INPUT_TOKENS: u64 = 10;

/// A model provider double: OpenAI's chat completions wire format on a real socket. It
/// answers after a moment (so that calls overlap), charges the whole `max_tokens`, and
/// by question: "slow" waits 30 s, "huge" answers 2 MiB, "status 400" and "status 502"
/// answer with that status.
async fn provider() -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post({
            let seen = Arc::clone(&seen);
            move |axum::Json(body): axum::Json<Value>| async move {
                seen.lock().unwrap().push(body.clone());
                let question = body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
                tokio::time::sleep(Duration::from_millis(50)).await;
                if question.contains("slow") {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                for status in [400, 502] {
                    if question.contains(&format!("status {status}")) {
                        let status = axum::http::StatusCode::from_u16(status).unwrap();
                        return (status, "the upstream model says no").into_response();
                    }
                }
                let answer = if question.contains("huge") {
                    "x".repeat(2 << 20)
                } else {
                    format!("answer to {question}")
                };
                axum::Json(json!({
                    "model": body["model"],
                    "choices": [{ "message": { "role": "assistant", "content": answer } }],
                    "usage": { "prompt_tokens": INPUT_TOKENS, "completion_tokens": body["max_tokens"] },
                }))
                .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// $1 per million tokens either way, answers of at most 1,000 tokens: a call costs
/// $0.00101 and may cost its input's bytes more.
fn model_engine(url: &str, grant: &str) -> Engine {
    // `[gateway]`: the engine talks to the provider over HTTP.
    engine(&format!(
        "[gateway]\nbase_url = {url:?}\ntiers.fast = {{ model = \"tiny\", usd_per_million_input = 1.0, usd_per_million_output = 1.0, max_output_tokens = 1000 }}\n\
         [agents.thinker]\nmodel = {grant}\n[agents.plain]\n"
    ))
}

const COST: f64 = (INPUT_TOKENS + 1000) as f64 / 1e6;

/// The most an `ask` of `question` may cost: its bytes and the markup of its system
/// message, its question and the reply, bound its input tokens.
fn worst_case(question: &str) -> f64 {
    let input = "Answer briefly.".len() + question.len() + 3 * 16;
    (input + 1000) as f64 / 1e6
}

fn is_spend_cap(message: &str) -> bool {
    message.contains("spend cap is reached")
}

#[tokio::test]
async fn model_calls_go_by_tier_through_the_gateway_and_stop_before_the_turns_spend_cap() {
    let (url, seen) = provider().await;
    let engine = model_engine(&url, "{ spend_cap_usd = 0.005 }");
    let turn = in_conversation(&engine, "thinker", "s", "c");
    // $0.00101 a call, each reserving up to $0.00107 first: four fit under $0.005,
    // the fifth would not, and is refused before it runs.
    for question in ["one", "two", "three", "four"] {
        let answer = call(&engine, &turn, "ctx__ask", json!({ "text": question }))
            .await
            .unwrap();
        assert_eq!(answer, format!("answer to {question}"));
    }
    let refused = call(&engine, &turn, "ctx__ask", json!({ "text": "five" }))
        .await
        .expect_err("over the cap");
    assert!(is_spend_cap(refused.message()), "{}", refused.message());
    assert!(
        refused.message().contains("the turn's"),
        "{}",
        refused.message()
    );
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 4);
    assert!(calls
        .iter()
        .all(|call| call.model.as_deref() == Some("tiny")
            && call.tool == "ctx:ask"
            && (call.cost_usd - COST).abs() < 1e-12));
    // The provider got the tier's model and its longest answer, never a name from the
    // tool; the refused call never reached it.
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0]["model"], "tiny");
    assert_eq!(requests[0]["max_tokens"], 1000);
    assert_eq!(
        requests[0]["messages"][0],
        json!({ "role": "system", "content": "Answer briefly." })
    );
    // A new turn has a new budget.
    let next = in_conversation(&engine, "thinker", "s", "c");
    assert!(call(&engine, &next, "ctx__ask", json!({ "text": "six" }))
        .await
        .is_ok());
    // Without the grant, the tool gets no model.
    let plain = engine.turn("plain").unwrap();
    assert_eq!(
        call(&engine, &plain, "ctx__ask", json!({ "text": "x" }))
            .await
            .unwrap(),
        "no model access"
    );
}

#[tokio::test]
async fn concurrent_model_calls_in_one_turn_never_spend_past_its_cap() {
    let (url, seen) = provider().await;
    let cap = 0.005;
    let engine = model_engine(&url, &format!("{{ spend_cap_usd = {cap} }}"));
    let turn = in_conversation(&engine, "thinker", "s", "c");
    let arguments = json!({ "text": "at once" }).to_string();
    // Twelve calls started together: every one asks before any has an answer.
    let calls = (0..12).map(|_| engine.call(&turn, Call::new("ctx__ask", &arguments)));
    let results = futures::future::join_all(calls).await;
    let refused = results
        .iter()
        .filter(|result| {
            result
                .as_ref()
                .is_err_and(|error| is_spend_cap(error.message()))
        })
        .count();
    let answered = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(answered + refused, 12, "{results:?}");
    assert!(refused > 0, "some calls must be refused: {results:?}");
    let charged: f64 = turn.spend().calls().iter().map(|call| call.cost_usd).sum();
    assert!(charged <= cap, "charged ${charged} against a ${cap} cap");
    // Every call that reached the provider was charged.
    assert_eq!(seen.lock().unwrap().len(), answered);
    assert_eq!(turn.spend().calls().len(), answered);
}

#[tokio::test]
async fn a_model_call_cut_at_the_deadline_or_cancelled_is_charged_what_it_may_have_cost() {
    let (url, seen) = provider().await;
    let engine = model_engine(&url, "{ spend_cap_usd = 0.005 }");
    let turn = in_conversation(&engine, "thinker", "s", "c");
    let arguments = json!({ "text": "slow" }).to_string();
    // Long enough for the request to reach the provider on a busy machine; the provider
    // then holds it 30 s, so the deadline cuts it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    let late = engine
        .call(&turn, Call::new("ctx__ask", &arguments).deadline(deadline))
        .await;
    // The dispatch and the model call watch the same deadline and token: whichever
    // notices first, the call ends there.
    let late = late.expect_err("stopped");
    assert!(
        late.kind() == CallErrorKind::TimedOut
            || late.message().contains("passed the tool's deadline"),
        "{late:?}"
    );
    let token = engine_core::CancellationToken::new();
    // Cancelled once the provider has the request, not at a guess of when it will.
    let cancel = {
        let token = token.clone();
        let seen = Arc::clone(&seen);
        tokio::spawn(async move {
            while seen.lock().unwrap().len() < 2 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            token.cancel();
        })
    };
    let cancelled = engine
        .call(&turn, Call::new("ctx__ask", &arguments).cancel_on(&token))
        .await;
    cancel.await.unwrap();
    let cancelled = cancelled.expect_err("stopped");
    assert!(
        cancelled.kind() == CallErrorKind::Cancelled
            || cancelled.message().contains("was cancelled"),
        "{cancelled:?}"
    );
    // Both reached the provider, which may bill them: each is charged its worst case.
    assert_eq!(seen.lock().unwrap().len(), 2);
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for cut in &calls {
        assert_eq!(cut.model, None, "{cut:?}");
        assert!((cut.cost_usd - worst_case("slow")).abs() < 1e-12, "{cut:?}");
    }
}

#[tokio::test]
async fn a_server_error_status_is_charged_what_it_may_have_cost_and_a_client_error_is_not() {
    let (url, seen) = provider().await;
    let engine = model_engine(&url, "{ spend_cap_usd = 0.005 }");
    let turn = in_conversation(&engine, "thinker", "s", "c");
    for question in ["status 400", "status 502"] {
        let error = call(&engine, &turn, "ctx__ask", json!({ "text": question }))
            .await
            .expect_err("an error status is no answer");
        assert!(
            error
                .message()
                .contains(&format!("the provider answered {}", &question[7..])),
            "{question}: {error:?}"
        );
    }
    assert_eq!(seen.lock().unwrap().len(), 2);
    // A 502 may come from a proxy whose upstream already ran: charged its worst case. A
    // 400 refused the request: nothing to charge, nothing recorded.
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].model, None);
    assert!(
        (calls[0].cost_usd - worst_case("status 502")).abs() < 1e-12,
        "{calls:?}"
    );
}

#[tokio::test]
async fn an_answer_longer_than_the_gateway_reads_is_refused_and_charged() {
    let (url, _) = provider().await;
    let engine = model_engine(&url, "{ spend_cap_usd = 0.005 }");
    let turn = in_conversation(&engine, "thinker", "s", "c");
    let error = match call(&engine, &turn, "ctx__ask", json!({ "text": "huge" })).await {
        // Not the answer itself in the message: it is 2 MiB.
        Ok(answer) => panic!("a {}-byte answer was read", answer.to_string().len()),
        Err(error) => error,
    };
    assert!(
        error
            .message()
            .contains("longer than 1048576 bytes (`max_response_bytes`)"),
        "{}",
        error.message()
    );
    let calls = turn.spend().calls();
    assert_eq!(calls.len(), 1);
    assert!((calls[0].cost_usd - worst_case("huge")).abs() < 1e-12);
}

#[tokio::test]
async fn a_sessions_turns_share_its_cap_and_every_session_shares_the_agents_window() {
    let (url, _) = provider().await;
    // Each turn may spend $0.005, a session $0.0025 (two calls), the agent $0.004 an
    // hour (three calls).
    let engine = model_engine(
        &url,
        "{ spend_cap_usd = 0.005, session_cap_usd = 0.0025, window = { cap_usd = 0.004, secs = 3600 } }",
    );
    let ask = |turn| {
        let engine = &engine;
        async move { call(engine, &turn, "ctx__ask", json!({ "text": "q" })).await }
    };
    let first = engine.session("thinker").unwrap();
    assert!(ask(engine.turn_in(&first).unwrap()).await.is_ok());
    assert!(ask(engine.turn_in(&first).unwrap()).await.is_ok());
    // A fresh turn, and still the session's third call: refused.
    let refused = ask(engine.turn_in(&first).unwrap())
        .await
        .expect_err("the session's cap");
    assert!(
        is_spend_cap(refused.message()) && refused.message().contains("the session's"),
        "{}",
        refused.message()
    );
    // Another session has its own cap, but the agent's window has room for one call.
    let second = engine.session("thinker").unwrap();
    assert!(ask(engine.turn_in(&second).unwrap()).await.is_ok());
    let refused = ask(engine.turn_in(&second).unwrap())
        .await
        .expect_err("the window's cap");
    assert!(
        refused
            .message()
            .contains("the agent's 3600-second model spend cap"),
        "{}",
        refused.message()
    );
    // A turn outside any session is still within the agent's window.
    let outside = ask(engine.turn("thinker").unwrap()).await;
    assert!(is_spend_cap(
        outside.expect_err("the window's cap").message()
    ));
}

#[tokio::test]
async fn only_a_turn_with_model_access_gets_a_spend_meter_of_its_own() {
    // Nothing listens there: no request is made.
    let engine = model_engine("http://127.0.0.1:9", "{ spend_cap_usd = 0.005 }");
    // An agent without model access: its turns (an MCP call is one) share one meter,
    // which none of its tools can charge.
    let plain = engine.session("plain").unwrap();
    let (first, second) = (
        engine.turn_in(&plain).unwrap(),
        engine.turn_in(&plain).unwrap(),
    );
    assert!(std::ptr::eq(first.spend(), second.spend()));
    let elsewhere = engine.turn_in(&engine.session("plain").unwrap()).unwrap();
    assert!(std::ptr::eq(first.spend(), elsewhere.spend()));
    assert!(std::ptr::eq(
        first.spend(),
        engine.turn("plain").unwrap().spend()
    ));
    // With model access, each turn counts against its own cap.
    let thinker = engine.session("thinker").unwrap();
    let (first, second) = (
        engine.turn_in(&thinker).unwrap(),
        engine.turn_in(&thinker).unwrap(),
    );
    assert!(!std::ptr::eq(first.spend(), second.spend()));
    assert!(!std::ptr::eq(
        engine.turn("thinker").unwrap().spend(),
        engine.turn("thinker").unwrap().spend()
    ));
}
