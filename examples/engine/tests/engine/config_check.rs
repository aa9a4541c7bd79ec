//! `engine config check [FILE]`: every problem start-up would refuse, at once, without
//! starting anything; one test per rule.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A directory of its own for each test: the configuration goes there, and the engine
/// runs there (so a check that created anything would show).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("engine-config-check-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self) -> PathBuf {
        self.0.join("engine.toml")
    }

    /// `engine config check FILE` on `toml`, with `env` besides a clean environment.
    fn check(&self, toml: &str, env: &[(&str, &str)]) -> Output {
        std::fs::write(self.file(), toml).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_engine"));
        command
            .args(["config", "check"])
            .arg(self.file())
            .current_dir(&self.0)
            .env_clear();
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().expect("the engine runs")
    }

    /// The engine started on the file last checked (`tools`), in the same clean
    /// environment.
    fn start(&self) -> Output {
        Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("--config")
            .arg(self.file())
            .arg("tools")
            .current_dir(&self.0)
            .env_clear()
            .output()
            .expect("the engine runs")
    }

    /// Each problem line the check printed, without the file it names (asserted here).
    fn problems(&self, output: &Output) -> Vec<String> {
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(output.stdout.is_empty(), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut lines = stderr.lines();
        let head = lines.next().unwrap_or_default();
        assert!(
            head.starts_with("the engine would refuse to start: the configuration is not valid: "),
            "{stderr}"
        );
        let at = format!("  {}: ", self.file().display());
        lines
            .map(|line| {
                line.strip_prefix(&at)
                    .unwrap_or_else(|| panic!("a problem that names no file: {line}"))
                    .to_owned()
            })
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_good_configuration_passes_and_nothing_is_created() {
    let scratch = Scratch::new("good");
    let output = scratch.check(
        "[agents.docs]\ntools = [\"builtin:list_files\"]\nproject = { root = \"site\" }\n\
         [agents.support]\nknowledge = \"write\"\nsecrets = { crm_api_key = \"k\" }\n",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "ok: the configuration has no problem with what this engine links\n"
    );
    let created: Vec<_> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(created, ["engine.toml"], "the check created files");
}

#[test]
fn unknown_keys_are_reported_each_with_its_path_and_the_nearest_key() {
    let scratch = Scratch::new("keys");
    let output = scratch.check(
        "data_dirr = \"d\"\n[agents.a]\nknowlege = \"read\"\n[agents.a.model]\nspend_cap_usd = 1.0\ncap = 2\n",
        &[],
    );
    let fix = "correct its spelling or remove it (the engine's keys are in the documentation of `EngineConfig`)";
    assert_eq!(
        scratch.problems(&output),
        [
            format!("`agents.a.knowlege` is not a key the engine reads: did you mean `knowledge`? {fix}"),
            format!("`agents.a.model.cap` is not a key the engine reads: {fix}"),
            format!("`data_dirr` is not a key the engine reads: did you mean `data_dir`? {fix}"),
        ]
    );
}

#[test]
fn an_api_key_in_the_file_points_to_api_key_secret() {
    let scratch = Scratch::new("api-key");
    let output = scratch.check(
        "[agents.bot]\n[providers.local]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key = \"sk-live-1\"\n",
        &[],
    );
    assert_eq!(
        scratch.problems(&output),
        ["`providers.local.api_key` is not a key the engine reads: a key is a secret, never in this file: name the secret that holds it with `api_key_secret = \"...\"`, and give its value as an agent's secret (`ENGINE_SECRET__<agent>__<secret>`)"]
    );
    let printed = [&output.stdout, &output.stderr].map(|bytes| String::from_utf8_lossy(bytes));
    assert!(
        printed.iter().all(|text| !text.contains("sk-live-1")),
        "{printed:?}"
    );
}

#[test]
fn a_tool_id_nothing_links_is_reported_with_the_nearest_id() {
    let scratch = Scratch::new("ids");
    let output = scratch.check(
        "[agents.a]\ntools = [\"weather:weather\", \"weather:wether\"]\n",
        &[],
    );
    let [problem] = &scratch.problems(&output)[..] else {
        panic!("one problem expected: {output:?}");
    };
    assert!(
        problem.starts_with(
            "`agents.a.tools` names `weather:wether`, which no linked plugin defines: did you mean `weather:weather`? name linked tools only (`acme:book_appointment`,"
        ),
        "{problem}"
    );
    assert!(
        problem.ends_with("`weather:weather`), or link the plugin that defines it"),
        "{problem}"
    );
}

#[test]
fn a_secret_no_enabled_tool_reads_is_reported_from_the_file_or_the_environment() {
    let scratch = Scratch::new("unused-secret");
    let output = scratch.check(
        "[agents.a]\nsecrets = { crm_api_kye = \"k\" }\n\
         [agents.b]\ntools = [\"weather:weather\"]\nsecrets = { crm_api_key = \"k\" }\n",
        &[("ENGINE_SECRET__a__other", "v")],
    );
    assert_eq!(
        scratch.problems(&output),
        [
            "`agents.a.secrets.crm_api_kye` is a secret nothing the agent enables reads: did you mean `crm_api_key`? correct the key, or remove it (the agent's tools, hooks and provider read `crm_api_key`, `crm_book`)",
            "`agents.a.secrets.other` is a secret nothing the agent enables reads: correct the key, or remove it (the agent's tools, hooks and provider read `crm_api_key`, `crm_book`)",
            "`agents.b.secrets.crm_api_key` is a secret nothing the agent enables reads: remove it: the agent's tools, hooks and provider read no secret",
        ]
    );
}

#[test]
fn an_enabled_tool_whose_secret_is_missing_is_reported() {
    let scratch = Scratch::new("missing-secret");
    let output = scratch.check("[agents.a]\ntools = [\"acme:contact_card\"]\n", &[]);
    assert_eq!(
        scratch.problems(&output),
        [
            "`agents.a.tools` enables `acme:contact_card`, which the agent cannot equip: the secret `crm_api_key` is not configured: give the agent what the tool needs, or take the tool out of the list",
            "`agents.a.tools` enables `acme:contact_card`, which the agent cannot equip: its plugin's settings are not configured (`[agents.a.plugins.acme]`): give the agent what the tool needs, or take the tool out of the list",
        ]
    );
    // The secret from the environment and the plugin's settings are enough.
    let output = scratch.check(
        "[agents.a]\ntools = [\"acme:contact_card\"]\n\
         [agents.a.plugins.acme]\nbase_url = \"https://crm.acme.example\"\nregion = \"eu\"\n",
        &[("ENGINE_SECRET__a__crm_api_key", "k")],
    );
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn plugin_settings_are_checked_against_what_the_plugin_reads() {
    let scratch = Scratch::new("settings");
    let output = scratch.check(
        "[agents.a.plugins.acme]\nbase_url = \"https://crm.acme.example\"\nregion = \"eu\"\nretries = 3\n\
         [agents.b.plugins.acme]\nbase_url = \"https://crm.acme.example\"\nregion = \"mars\"\n\
         [agents.c.plugins.acme]\nbase_url = \"https://crm.acme.example\"\nregion = \"eu\"\nretry = { after = nan }\n\
         [agents.a.plugins.weather]\nunits = \"metric\"\n\
         [agents.a.plugins.acme-crm]\n",
        &[],
    );
    let fix = "give the settings `acme-crm` documents for its state `acme_crm::Crm`";
    assert_eq!(
        scratch.problems(&output),
        [
            format!("`agents.a.plugins.acme.retries` is not a setting the plugin reads: {fix}"),
            "`agents.a.plugins.acme-crm` configures a plugin nothing links: name a linked plugin by its namespace (`acme`, `builtin`, `calendar`, `contacts`, `guard`, `notes`, `weather`, `webhook`), or link the plugin".to_owned(),
            "`agents.a.plugins.weather` configures `weather`, which takes no settings: remove the table".to_owned(),
            format!("`agents.b.plugins.acme.region` is not valid: unknown variant `mars`, expected `eu` or `us`: {fix}"),
            "`agents.c.plugins.acme.retry.after` is not a finite number, which plugin settings cannot hold: give a finite number, a string, a boolean, an array or a table".to_owned(),
        ]
    );
}

#[test]
fn settings_the_plugin_refuses_to_build_from_refuse_start_up_but_not_the_check() {
    let scratch = Scratch::new("settings-build");
    let toml = "[agents.a.plugins.acme]\nbase_url = \"http://crm.acme.example\"\nregion = \"eu\"\n";
    // The check reads the settings, and builds nothing (a state may connect somewhere).
    let checked = scratch.check(toml, &[]);
    assert!(checked.status.success(), "{checked:?}");
    assert_eq!(
        String::from_utf8_lossy(&checked.stdout),
        "ok: the configuration has no problem with what this engine links\n"
    );
    let started = scratch.start();
    assert_eq!(started.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&started.stderr),
        "the engine refused to start: the plugin `acme` refused the settings `[agents.a.plugins.acme]`: `base_url` is `http://crm.acme.example`: give an https:// URL (or http:// on loopback)\n"
    );
}

#[test]
fn a_channel_no_linked_plugin_defines_is_reported() {
    let scratch = Scratch::new("channel");
    let output = scratch.check(
        "[agents.bot.turn]\nprovider = \"local\"\n\
         [providers.local]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [channels.webhok]\nagent = \"bot\"\n",
        &[],
    );
    assert_eq!(
        scratch.problems(&output),
        ["`channels.webhok` mounts a channel no linked plugin defines: did you mean `webhook`? mount one of the linked channels (`webhook`), or link the plugin that defines it"]
    );
}

#[test]
fn a_turn_naming_a_provider_not_configured_is_reported_with_the_nearest_or_in_words() {
    let scratch = Scratch::new("provider");
    let output = scratch.check("[agents.bot.turn]\nprovider = \"locl\"\n", &[]);
    assert_eq!(
        scratch.problems(&output),
        ["`agents.bot.turn.provider` names `locl`, which is not configured: add [providers.locl], or a file of the providers directory: no provider is configured"]
    );
    let output = scratch.check(
        "[agents.bot.turn]\nprovider = \"locl\"\n\
         [providers.local]\nwire = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
        &[],
    );
    assert_eq!(
        scratch.problems(&output),
        ["`agents.bot.turn.provider` names `locl`, which is not configured: did you mean `local`? add [providers.locl] or a file of the providers directory, or name one of `local`"]
    );
    // A file of the providers directory gives it, with the key the agent must hold.
    std::fs::create_dir_all(scratch.0.join("providers.d")).unwrap();
    std::fs::write(
        scratch.0.join("providers.d/locl.json"),
        r#"{"name": "locl", "wire": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_secret": "locl_key", "usd_per_million_input": 0, "usd_per_million_output": 0}"#,
    )
    .unwrap();
    let output = scratch.check(
        "[agents.bot.turn]\nprovider = \"locl\"\n[agents.bot.secrets]\nlocl_key = \"k\"\n",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_value_out_of_range_is_reported() {
    let scratch = Scratch::new("range");
    let output = scratch.check("[artifacts]\nttl_secs = 0\n", &[]);
    assert_eq!(
        scratch.problems(&output),
        ["`artifacts.ttl_secs` is 0: give 1 to 604800 seconds"]
    );
}

#[test]
fn every_problem_is_reported_at_once_and_start_up_refuses_the_same() {
    let scratch = Scratch::new("all");
    let toml =
        "[agents.a]\ntools = [\"nope:nope\"]\nsecrets = { unused = \"k\" }\nknowlege = \"read\"\n\
                [artifacts]\nttl_secs = 0\n[channels.nope]\nagent = \"a\"\n";
    let output = scratch.check(toml, &[]);
    let problems = scratch.problems(&output);
    let keys: Vec<&str> = problems
        .iter()
        .map(|problem| problem.split('`').nth(1).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "agents.a.knowlege",
            "channels.nope.agent",
            "artifacts.ttl_secs",
            "agents.a.tools",
            "agents.a.secrets.unused",
            "channels.nope",
        ]
    );
    // Any other command starts the engine, which refuses with the same problems.
    let started = scratch.start();
    assert_eq!(started.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&started.stderr).replace(
            "the engine refused to start: ",
            "the engine would refuse to start: "
        ),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn without_a_file_the_default_configuration_is_checked_and_nothing_is_created() {
    let scratch = Scratch::new("no-file");
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["config", "check"])
        .current_dir(&scratch.0)
        .env_clear()
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "ok: the default configuration (no file given) has no problem with what this engine links\n"
    );
    assert_eq!(
        std::fs::read_dir(&scratch.0).unwrap().count(),
        0,
        "the check created files"
    );
}

#[test]
fn a_file_that_does_not_parse_says_where() {
    let scratch = Scratch::new("syntax");
    let output = scratch.check("[agents.a\n", &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "the engine would refuse to start: {}: line 1, column ",
            scratch.file().display()
        )),
        "{stderr}"
    );
}

/// Issue 31 #1: a project root that holds the configuration's directory (so its
/// `tools.d`) let a model write a command manifest and run it. The check refuses it,
/// and every other root that holds or lies in what the engine reads, with the fix, and
/// creates nothing; start-up refuses the same.
#[test]
fn a_project_root_over_what_the_engine_reads_is_refused_with_the_fix() {
    let scratch = Scratch::new("roots");
    let dir = scratch.0.display();
    let fix = "give the project a directory of its own";
    let cases = [
        // The configuration's directory, which holds `tools.d`.
        (
            "[agents.a]\nproject = { root = \".\" }\n".to_owned(),
            format!("the extensions directory {dir}/tools.d"),
        ),
        // The same directory with the extensions and providers elsewhere: the file
        // itself.
        (
            format!(
                "[extensions]\ndir = \"/nonexistent/tools.d\"\nproviders_dir = \"/nonexistent/providers.d\"\n[agents.a]\nproject = {{ root = {dir:?} }}\n"
            ),
            format!("the configuration file's directory {dir}"),
        ),
        // An extensions directory within the root, and a root within it.
        (
            "[extensions]\ndir = \"site/tools.d\"\n[agents.a]\nproject = { root = \"site\" }\n"
                .to_owned(),
            format!("the extensions directory {dir}/site/tools.d"),
        ),
        (
            "[extensions]\ndir = \"ext\"\n[agents.a]\nproject = { root = \"ext/site\" }\n"
                .to_owned(),
            format!("the extensions directory {dir}/ext"),
        ),
        // A providers directory within the root, and a root within it: a model that
        // wrote a provider file would send the conversations elsewhere.
        (
            "[extensions]\nproviders_dir = \"site/providers.d\"\n[agents.a]\nproject = { root = \"site\" }\n"
                .to_owned(),
            format!("the providers directory {dir}/site/providers.d"),
        ),
        (
            "[extensions]\nproviders_dir = \"prov\"\n[agents.a]\nproject = { root = \"prov/site\" }\n"
                .to_owned(),
            format!("the providers directory {dir}/prov"),
        ),
        // A root within the data directory.
        (
            "data_dir = \"state\"\n[agents.a]\nproject = { root = \"state/site\" }\n".to_owned(),
            "the engine's data directory state".to_owned(),
        ),
    ];
    for (toml, what) in cases {
        let output = scratch.check(&toml, &[]);
        assert_eq!(output.status.code(), Some(1), "{toml}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "it overlaps {what}, which the engine reads and the model must not write: {fix}"
            )),
            "{toml}: {stderr}"
        );
        let started = scratch.start();
        assert_eq!(started.status.code(), Some(1), "{toml}: {started:?}");
        assert!(
            String::from_utf8_lossy(&started.stderr).contains(&format!("it overlaps {what}")),
            "{toml}: {started:?}"
        );
        let created: Vec<_> = std::fs::read_dir(&scratch.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(
            created,
            ["engine.toml"],
            "{toml}: the check or the start created files"
        );
    }
}

/// Issue 31 #1: the home directory holds what the programs a tool runs read (Python's
/// per-user packages run at its start): a root that holds it is refused too.
#[test]
fn a_project_root_that_holds_the_home_directory_is_refused() {
    let scratch = Scratch::new("home");
    let home = scratch.0.join("site/home");
    let home_text = home.to_str().unwrap();
    let output = scratch.check(
        "[agents.a]\nproject = { root = \"site\" }\n",
        &[("HOME", home_text)],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "it overlaps the home directory (HOME) {home_text}"
        )),
        "{stderr}"
    );
    // Within one of its hidden entries (Python's per-user packages are under `.local`).
    let elsewhere = scratch.0.join("home");
    let output = scratch.check(
        "[agents.a]\nproject = { root = \"home/.local\" }\n",
        &[("HOME", elsewhere.to_str().unwrap())],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    // Beside it, or in a visible directory within it, the root is fine.
    for root in ["site", "home/projects/site"] {
        let output = scratch.check(
            &format!("[agents.a]\nproject = {{ root = {root:?} }}\n"),
            &[("HOME", elsewhere.to_str().unwrap())],
        );
        assert!(output.status.success(), "{root}: {output:?}");
    }
}

/// A link that leads into a root, to a directory not made yet, is where the engine will
/// read: an extensions directory given so is refused like the directory itself.
#[test]
fn an_extensions_directory_that_is_a_dangling_link_into_a_root_is_refused() {
    let scratch = Scratch::new("dangling");
    std::fs::create_dir_all(scratch.0.join("site")).unwrap();
    std::os::unix::fs::symlink(scratch.0.join("site/ext"), scratch.0.join("ext")).unwrap();
    let output = scratch.check(
        "[extensions]\ndir = \"ext\"\n[agents.a]\nproject = { root = \"site\" }\n",
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "it overlaps the extensions directory {}/ext",
            scratch.0.display()
        )),
        "{stderr}"
    );
}

/// Without `HOME`, programs take the password file's home (and an empty one is `/`): a
/// root that holds it, or lies in one of its hidden entries, is refused all the same.
#[test]
fn without_home_the_password_files_home_is_kept_out_of_roots() {
    use std::os::unix::fs::MetadataExt as _;
    let scratch = Scratch::new("no-home");
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let home = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.len() >= 7 && fields[2] == uid.to_string())
        .map(|fields| fields[5].to_owned())
        .expect("the password file names the test's user");
    let output = scratch.check(
        &format!(
            "[agents.a]\nproject = {{ root = {:?} }}\n",
            format!("{home}/.local")
        ),
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "HOME unset: {output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("the home directory (HOME)"),
        "{output:?}"
    );
    let output = scratch.check(
        "[agents.a]\nproject = { root = \"/.local\" }\n",
        &[("HOME", "")],
    );
    assert_eq!(output.status.code(), Some(1), "HOME empty: {output:?}");
}

#[test]
fn a_check_of_a_configuration_with_a_shared_database_opens_no_database() {
    // Nothing listens on port 1: a check that connected (to read the panel's secrets
    // there, or to migrate) would fail.
    let scratch = Scratch::new("database");
    let output = scratch.check(
        "[agents.bot]\n[database]\nurl = \"postgres://engine@127.0.0.1:1/none\"\npassword_env = \"NO_PASSWORD\"\n",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
}
