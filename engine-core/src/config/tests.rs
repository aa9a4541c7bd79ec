use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

#[test]
fn secrets_come_from_the_environment_too_and_override_the_file() {
    let dir = std::env::temp_dir().join(format!("engine-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.toml");
    std::fs::write(
        &path,
        "[agents.support]\nsecrets = { crm_api_key = \"from-file\", other = \"x\" }\n[agents.sales]\n",
    )
    .unwrap();
    let config = EngineConfig::load(
        Some(&path),
        env(&[
            ("ENGINE_SECRET__support__crm_api_key", "from-env"),
            ("ENGINE_SECRET__sales__mail_token", "t"),
            ("PATH", "/bin"),
        ]),
    )
    .unwrap();
    assert_eq!(config.agents["support"].secrets["crm_api_key"], "from-env");
    assert_eq!(config.agents["support"].secrets["other"], "x");
    assert_eq!(config.agents["sales"].secrets["mail_token"], "t");
    let mut values: Vec<&str> = config.secret_values().collect();
    values.sort();
    assert_eq!(values, ["from-env", "t", "x"]);
}

#[test]
fn without_agents_there_is_the_default_one_and_bad_input_is_named() {
    let config = EngineConfig::load(None, Vec::new()).unwrap();
    assert_eq!(config.agents.keys().collect::<Vec<_>>(), [DEFAULT_AGENT]);
    let error = EngineConfig::load(None, env(&[("ENGINE_SECRET__nokey", "v")])).unwrap_err();
    assert!(
        error.to_string().contains("names no agent and key"),
        "{error}"
    );
    let error = EngineConfig::parse("[agents.a]\nknowledge = \"everything\"\n").unwrap_err();
    assert!(error.to_string().contains("knowledge"), "{error}");
    let error = EngineConfig::parse("[agents.a]\nsecret = {}\n").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`agents.a.secret` is not a key the engine reads"),
        "{error}"
    );
}

#[test]
fn an_agents_debug_output_names_its_keys_not_their_values() {
    let config = EngineConfig::parse("[agents.a]\nsecrets = { key = \"value-123\" }\n").unwrap();
    let shown = format!("{config:?}");
    assert!(
        shown.contains("\"key\"") && !shown.contains("value-123"),
        "{shown}"
    );
}

#[test]
fn a_secret_variable_for_an_agent_the_file_does_not_define_is_refused_naming_those_it_does() {
    let dir = std::env::temp_dir().join(format!("engine-config-agents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.toml");
    std::fs::write(&path, "[agents.support]\n[agents.sales]\n").unwrap();
    let error = EngineConfig::load(
        Some(&path),
        env(&[("ENGINE_SECRET__suport__crm_api_key", "k")]),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`ENGINE_SECRET__suport__crm_api_key` is for the agent `suport`, which the \
         configuration does not define; the configured agents are: sales, support. \
         Rename the variable, or add [agents.suport] to the configuration"
    );
    // Without a file the variables still define the agents.
    let config =
        EngineConfig::load(None, env(&[("ENGINE_SECRET__suport__crm_api_key", "k")])).unwrap();
    assert_eq!(config.agents.keys().collect::<Vec<_>>(), ["suport"]);
}

#[test]
fn money_that_is_not_a_finite_amount_of_dollars_is_refused() {
    let error = EngineConfig::parse(
        "[agents.a]\nmodel = { spend_cap_usd = nan }\n\
         [agents.b]\nmodel = { spend_cap_usd = -0.5 }\n\
         [gateway]\nbase_url = \"http://127.0.0.1:1/v1\"\n\
         tiers.fast = { model = \"m\", usd_per_million_input = inf, usd_per_million_output = -1.0 }\n",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "4 problem(s):\n  \
         `agents.a.model.spend_cap_usd` is NaN: give a finite amount of US dollars, 0 or more\n  \
         `agents.b.model.spend_cap_usd` is -0.5: give a finite amount of US dollars, 0 or more\n  \
         `gateway.tiers.fast.usd_per_million_input` is inf: give a finite amount of US dollars, 0 or more\n  \
         `gateway.tiers.fast.usd_per_million_output` is -1: give a finite amount of US dollars, 0 or more"
    );
    assert!(EngineConfig::parse("[agents.a]\nmodel = { spend_cap_usd = 0.0 }\n").is_ok());
    let error = EngineConfig::parse(
        "[agents.c]\nmodel = { spend_cap_usd = 1.0, session_cap_usd = nan, \
         window = { cap_usd = -1.0, secs = 0 } }\n",
    )
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        "`agents.c.model.session_cap_usd` is NaN: give a finite amount",
        "`agents.c.model.window.cap_usd` is -1: give a finite amount",
        "`agents.c.model.window.secs` is 0: give 1 to 2678400 seconds",
    ] {
        assert!(
            message.contains(problem),
            "`{problem}` is missing from: {message}"
        );
    }
}

#[test]
fn durations_and_sizes_out_of_their_bounds_are_refused_with_the_bounds() {
    let error = EngineConfig::parse(&format!(
        "[artifacts]\nttl_secs = {}\nmax_bytes = 0\ncapacity_bytes = 1\n\
         [knowledge]\nmax_document_bytes = 0\nmax_documents = {}\n",
        i64::MAX,
        MAX_KNOWLEDGE_DOCUMENTS + 1
    ))
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        format!(
            "`artifacts.ttl_secs` is {}: give 1 to 604800 seconds",
            i64::MAX
        ),
        "`artifacts.max_bytes` is 0: give 1 to 1073741824 bytes".to_owned(),
        "`knowledge.max_document_bytes` is 0: give 1 to 67108864 bytes".to_owned(),
        "`knowledge.max_documents` is 10000001: give 1 to 10000000 documents".to_owned(),
    ] {
        assert!(
            message.contains(&problem),
            "`{problem}` is missing from: {message}"
        );
    }
    let error = EngineConfig::parse(
        "[knowledge]\nmax_search_words = 0\nconnections = 1000\nmax_filename_bytes = 0\n\
         busy_timeout_ms = 60001\n\
         [state]\nidle_secs = 0\nmax_value_bytes = 100\nmax_conversation_bytes = 99\n",
    )
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        "`knowledge.max_search_words` is 0: give 1 to 1024 words",
        "`knowledge.connections` is 1000: give 1 to 64 connections",
        "`knowledge.max_filename_bytes` is 0: give 1 to 4096 bytes",
        "`knowledge.busy_timeout_ms` is 60001: give 0 to 60000 milliseconds",
        "`state.idle_secs` is 0: give 1 to 2592000 seconds",
        "`state.max_conversation_bytes` is 99: give 100 to",
    ] {
        assert!(
            message.contains(problem),
            "`{problem}` is missing from: {message}"
        );
    }
    let error =
        EngineConfig::parse("[artifacts]\nmax_bytes = 100\ncapacity_bytes = 99\n").unwrap_err();
    assert!(
        error.to_string().contains(
            "`artifacts.capacity_bytes` is 99: give 100 to 68719476736 bytes (at least artifacts.max_bytes"
        ),
        "{error}"
    );
    // The engine's builder checks a configuration made in code too.
    let mut config = EngineConfig::default();
    config.artifacts.ttl_secs = u64::MAX;
    let refused = crate::Engine::builder().config(config).build();
    assert!(
        matches!(refused, Err(crate::EngineError::Config(_))),
        "a ttl of u64::MAX seconds was accepted"
    );
}

#[test]
fn every_section_refuses_an_unknown_key() {
    for (key, text) in [
        ("data_dirr", "data_dirr = \"x\"\n"),
        ("agents.a.secret", "[agents.a]\nsecret = {}\n"),
        ("agents.a.model.cap", "[agents.a]\nmodel = { spend_cap_usd = 1.0, cap = 2 }\n"),
        ("agents.a.model.windows", "[agents.a]\nmodel = { spend_cap_usd = 1.0, windows = 2 }\n"),
        ("agents.a.project.rot", "[agents.a.project]\nroot = \"r\"\nrot = 1\n"),
        ("agents.a.turn.max_steps", "[agents.a.turn]\nprovider = \"p\"\nmax_steps = 1\n"),
        ("artifacts.ttl", "[artifacts]\nttl = 5\n"),
        ("knowledge.max_docs", "[knowledge]\nmax_docs = 5\n"),
        ("state.idle", "[state]\nidle = 5\n"),
        ("channels.hook.agnet", "[channels.hook]\nagent = \"a\"\nagnet = 1\n"),
        ("providers.p.modle", "[providers.p]\nwire = \"openai\"\nbase_url = \"http://x\"\nmodel = \"m\"\nmodle = 1\n"),
        ("gateway.key", "[gateway]\nbase_url = \"http://x\"\ntiers = {}\nkey = \"k\"\n"),
        (
            "gateway.tiers.fast.currency",
            "[gateway]\nbase_url = \"http://x\"\ntiers.fast = { model = \"m\", usd_per_million_input = 1.0, usd_per_million_output = 1.0, currency = \"eur\" }\n",
        ),
    ] {
        let error = EngineConfig::parse(text).unwrap_err().to_string();
        assert!(
            error.contains(&format!("`{key}` is not a key the engine reads")),
            "{key}: {error}"
        );
    }
}

#[test]
fn every_unknown_key_and_value_out_of_range_is_reported_at_once() {
    let error = EngineConfig::parse(
        "data_dirr = \"x\"\n[agents.a]\nknowlege = \"read\"\n[artifacts]\nttl_secs = 0\nttl = 5\n",
    )
    .unwrap_err();
    let ConfigError::Problems { problems, .. } = &error else {
        panic!("not a list of problems: {error}");
    };
    let keys: Vec<&str> = problems
        .iter()
        .map(|problem| problem.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "agents.a.knowlege",
            "artifacts.ttl",
            "data_dirr",
            "artifacts.ttl_secs"
        ]
    );
}

#[test]
fn a_toml_error_says_where_and_never_quotes_a_secret() {
    let error = EngineConfig::parse("[agents.support]\nsecrets = { crm_api_key = sk-live-4242 }\n")
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("line 2, column "), "{error}");
    assert!(
        !error.contains("sk-live") && !error.contains('\n'),
        "{error}"
    );
    // A value that parses but does not fit: serde's message quotes it, and it is a
    // secret's, so it is redacted.
    let error = EngineConfig::parse(
        "[agents.support]\nsecrets = { crm_api_key = \"sk-\\\"quoted\\\"\" }\nknowledge = \"sk-\\\"quoted\\\"\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("[REDACTED]") && !error.contains("quoted"),
        "{error}"
    );
    // A number left where a string belongs is quoted too.
    let error = EngineConfig::parse("[agents.a]\nsecrets = { pin = 90817263 }\n")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("[REDACTED]") && !error.contains("90817263"),
        "{error}"
    );
}

#[test]
fn a_database_url_with_a_password_or_another_scheme_is_refused_saying_where_it_goes() {
    let error = EngineConfig::parse(
        "[database]\nurl = \"postgres://engine:hunter2@db:5432/engine\"\npassword_env = \"DB_PASS\"\n\
         max_connections = 1\ntimeout_ms = 0\n",
    )
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        "`database.url` holds a password: remove it from the URL and set the environment variable `DB_PASS` instead",
        "`database.max_connections` is 1: give 2 to 1024 connections (and as many again for turns' conversation locks)",
        "`database.timeout_ms` is 0: give 1 to 60000 milliseconds",
    ] {
        assert!(message.contains(problem), "`{problem}` is missing from: {message}");
    }
    assert!(!message.contains("hunter2"), "{message}");
    let error = EngineConfig::parse(
        "[database]\nurl = \"postgres://engine@db/engine?sslmode=disable&password=hunter2\"\n",
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("`database.url` holds a password: remove it from the URL"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    let error =
        EngineConfig::parse("[database]\nurl = \"mysql://engine@db/engine\"\n").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`database.url` is not a PostgreSQL URL"),
        "{error}"
    );
    let fine = EngineConfig::parse(
        "[database]\nurl = \"postgresql://engine@db/engine?sslmode=disable\"\n",
    )
    .unwrap();
    let database = fine.database.unwrap();
    assert_eq!(database.password_env, "ENGINE_DATABASE_PASSWORD");
    assert_eq!((database.max_connections, database.timeout_ms), (16, 5000));
}

#[test]
fn an_instance_that_is_not_a_slug_is_refused_with_the_rule() {
    let checked = |slug: &str| {
        let config = EngineConfig::parse(&format!("instance = \"{slug}\"\n"))?;
        config.check().map(|()| config)
    };
    for slug in ["acme-prod", "a", "0x", &"a".repeat(63)] {
        assert_eq!(checked(slug).unwrap().instance.as_deref(), Some(slug));
    }
    for slug in [
        "",
        "Acme",
        "-acme",
        "acme_prod",
        "acme/../x",
        &"a".repeat(64),
    ] {
        let error = checked(slug).unwrap_err().to_string();
        assert!(
            error.contains("`instance`") && error.contains("lowercase letters, digits and `-`"),
            "{slug}: {error}"
        );
    }
}

#[test]
fn attachments_of_no_size_count_or_media_type_are_refused() {
    let error = EngineConfig::parse(
        "[artifacts]\nmax_bytes = 100\n\
         [attachments]\nmax_bytes = 0\nmax_count = 0\nmedia_types = [\"image/*\", \"Text/Plain\", \"*/*\", \"pdf\"]\n",
    )
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        "`attachments.max_bytes` is 0: give 1 to 1073741824 bytes",
        "`attachments.max_count` is 0: give 1 to 32 files",
        "`attachments.media_types` holds `Text/Plain`",
        "`attachments.media_types` holds `*/*`",
        "`attachments.media_types` holds `pdf`",
    ] {
        assert!(
            message.contains(problem),
            "`{problem}` is missing from: {message}"
        );
    }
    assert!(!message.contains("holds `image/*`"), "{message}");
    let taken = EngineConfig::parse("[attachments]\nmedia_types = [\"image/*\"]\n").unwrap();
    assert_eq!(taken.attachments.media_types, ["image/*"]);
}

#[test]
fn an_oauth_client_needs_a_public_url_a_secret_of_the_agent_and_endpoints_tls_keeps() {
    let error = EngineConfig::parse(
        "[oauth]\nconnect_ttl_secs = 5\n\
         [agents.a.oauth.\"cal:google\"]\nclient_id = \" \"\nclient_secret = \"missing\"\n\
         authorize_url = \"http://accounts.example.com/auth\"\ntoken_url = \"https://user:pw@accounts.example.com/token\"\n\
         [agents.a.oauth.google]\nclient_id = \"x\"\nclient_secret = \"missing\"\n",
    )
    .unwrap_err();
    let message = error.to_string();
    for problem in [
        "`oauth.public_url` is not set, and an agent has an OAuth client",
        "`oauth.connect_ttl_secs` is 5: give 60 to 86400 seconds",
        "`agents.a.oauth.\"cal:google\".client_id` is empty",
        "`agents.a.oauth.\"cal:google\".client_secret` names `missing`, which is not one of the agent's secrets: set ENGINE_SECRET__a__missing",
        "`agents.a.oauth.\"cal:google\".authorize_url` is `http://accounts.example.com/auth`",
        "`agents.a.oauth.\"cal:google\".token_url` is `https://user:pw@accounts.example.com/token`",
        "`agents.a.oauth.\"google\"` does not name a plugin's provider",
    ] {
        assert!(
            message.contains(problem),
            "`{problem}` is missing from: {message}"
        );
    }
    let taken = EngineConfig::parse(
        "[oauth]\npublic_url = \"http://127.0.0.1:8080\"\n\
         [agents.a]\nsecrets = { s = \"v\" }\n\
         [agents.a.oauth.\"cal:google\"]\nclient_id = \"x\"\nclient_secret = \"s\"\n\
         token_url = \"http://localhost:9000/token\"\n",
    );
    assert!(taken.is_ok(), "{:?}", taken.err());
    let trailing = EngineConfig::parse("[oauth]\npublic_url = \"https://engine.example.com/\"\n");
    assert!(trailing
        .unwrap_err()
        .to_string()
        .contains("without a trailing `/`"));
}
