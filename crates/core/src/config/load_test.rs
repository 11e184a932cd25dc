use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use super::*;
use crate::config::{Backend, LogFormat};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("resources/tests")
        .join(name)
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn no_file_gives_the_embedded_default() {
    let loader = ConfigLoader::new(Some(PathBuf::from("/nonexistent/copyhound.toml")));
    assert!(
        loader.load().is_err(),
        "an explicit missing file is an error"
    );
    let (config, file) = ConfigLoader {
        file: None,
        ..ConfigLoader::default()
    }
    .load()
    .unwrap();
    assert_eq!(file, None);
    assert_eq!(
        config.store_backend(),
        Backend::Embedded(PathBuf::from("./copyhound-data/store"))
    );
    assert_eq!(
        config.index_backend(),
        Backend::Embedded(PathBuf::from("./copyhound-data/index"))
    );
}

#[test]
fn the_good_fixture_loads_with_interpolation() {
    let (config, _) = ConfigLoader::new(Some(fixture("copyhound.good.toml")))
        .env(env(&[("REDIS_HOST", "10.0.0.5")]))
        .load()
        .unwrap();
    assert_eq!(config.index.url.as_deref(), Some("redis://10.0.0.5:6379/0"));
    assert_eq!(
        config.store.url.as_deref(),
        Some("mongodb://copy:secret@127.0.0.1:27017")
    );
    assert_eq!(config.index.max_distance, 3);
    assert_eq!(config.log.format, LogFormat::Json);
}

#[test]
fn unknown_keys_name_the_key_and_the_file() {
    let path = fixture("copyhound.wrongkey.toml");
    let error = ConfigLoader::new(Some(path.clone())).load().unwrap_err();
    let message = error.to_string();
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(message.contains("redis_url"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
}

#[test]
fn env_overrides_file_and_flags_override_env() {
    let mut file = tempfile_in_target("precedence.toml");
    writeln!(file.1, "[index]\nmax_distance = 2\nprefix = \"file:\"").unwrap();
    let loader = ConfigLoader::new(Some(file.0.clone())).env(env(&[
        ("COPYHOUND_INDEX_MAX_DISTANCE", "4"),
        ("COPYHOUND_INDEX_PREFIX", "env:"),
        ("PATH", "/bin"),
    ]));
    let (config, _) = loader.load().unwrap();
    assert_eq!(config.index.max_distance, 4);
    assert_eq!(config.index.prefix, "env:");
    let (config, _) = ConfigLoader::new(Some(file.0))
        .env(env(&[("COPYHOUND_INDEX_MAX_DISTANCE", "4")]))
        .set("index.max_distance", "5")
        .load()
        .unwrap();
    assert_eq!(config.index.max_distance, 5);
    assert_eq!(config.index.prefix, "file:");
}

#[test]
fn the_removed_index_layout_setting_is_refused_by_name() {
    let error = ConfigLoader::default()
        .set("index.layout", "compact")
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("layout"), "{error}");
}

#[test]
fn unknown_env_and_flags_are_rejected_by_name() {
    let error = ConfigLoader::default()
        .env(env(&[("COPYHOUND_REDIS_URL", "redis://x")]))
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("COPYHOUND_REDIS_URL"), "{error}");
    let error = ConfigLoader::default()
        .env(env(&[("COPYHOUND_INDEX_URLL", "redis://x")]))
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("urll"), "{error}");
    let error = ConfigLoader::default()
        .set("nosuch.key", "1")
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("nosuch.key"), "{error}");
    // Test-harness variables are not configuration.
    ConfigLoader::default()
        .env(env(&[("COPYHOUND_TEST_REDIS_URL", "redis://x")]))
        .load()
        .unwrap();
}

#[test]
fn bad_values_give_clear_errors() {
    let error = ConfigLoader::default()
        .set("store.url", "postgres://x")
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("mongodb://"), "{error}");
    let error = ConfigLoader::default()
        .set("index.max_distance", "12")
        .load()
        .unwrap_err();
    assert!(error.to_string().contains("at most 8"), "{error}");
    let error = ConfigLoader::default()
        .set("index.max_distance", "many")
        .load()
        .unwrap_err();
    assert!(
        error.to_string().contains("`index.max_distance`"),
        "{error}"
    );
}

#[test]
fn the_public_url_links_matches_and_must_be_an_http_url() {
    let (config, _) = ConfigLoader::default()
        .set("server.public_url", "https://copyhound.example/console/")
        .load()
        .unwrap();
    assert_eq!(
        config.server.match_link("m_1").as_deref(),
        Some("https://copyhound.example/console/ui/matches/m_1")
    );
    assert_eq!(
        ConfigLoader::default()
            .load()
            .unwrap()
            .0
            .server
            .match_link("m_1"),
        None
    );
    for bad in [
        "copyhound.example",
        "ftp://copyhound.example",
        "https://user@copyhound.example",
        "https://copyhound.example/?a=1",
        "https://",
    ] {
        let error = ConfigLoader::default()
            .set("server.public_url", bad)
            .load()
            .unwrap_err();
        assert!(
            error.to_string().contains("server.public_url"),
            "{bad}: {error}"
        );
    }
}

#[test]
fn a_short_operator_key_is_refused_without_printing_it() {
    let error = ConfigLoader::default()
        .set("server.admin_key", "hunter2")
        .load()
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("server.admin_key") && message.contains("at least 12"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    // Empty is unset: `serve` runs without the operator routes and says so.
    ConfigLoader::default()
        .set("server.admin_key", "")
        .load()
        .unwrap();
}

#[test]
fn secrets_are_masked() {
    let (config, _) = ConfigLoader::default()
        .set("store.url", "mongodb://copy:hunter2@db:27017/x")
        .set("queue.url", "redis://:pw@cache:6379")
        .set("server.admin_key", "topsecret-operator")
        .load()
        .unwrap();
    let printed = toml::to_string(&config.masked()).unwrap();
    assert!(
        !printed.contains("hunter2")
            && !printed.contains(":pw@")
            && !printed.contains("topsecret-operator"),
        "{printed}"
    );
    assert!(
        printed.contains("mongodb://copy:****@db:27017/x"),
        "{printed}"
    );
}

#[test]
fn interpolation_requires_set_variables_or_defaults() {
    let empty = BTreeMap::new();
    assert_eq!(interpolate("a=${X:-d}", &empty).unwrap(), "a=d");
    assert!(
        interpolate("a=${X}", &empty)
            .unwrap_err()
            .contains("X is not set")
    );
    assert!(interpolate("a=${X", &empty).is_err());
}

fn tempfile_in_target(name: &str) -> (PathBuf, std::fs::File) {
    let dir = std::env::temp_dir().join(format!("copyhound-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}

#[test]
fn e_mail_alerts_need_a_mail_server_and_real_addresses() {
    use std::io::Write;
    let load = |name: &str, text: &str| {
        let (path, mut file) = tempfile_in_target(name);
        file.write_all(text.as_bytes()).unwrap();
        ConfigLoader::new(Some(path)).load()
    };
    let alert = "[[reports.alerts]]\npublisher = \"P01\"\nemail_to = [\"legal@p01.example\"]\n";
    let error = load("mail1.toml", alert).unwrap_err();
    assert!(error.to_string().contains("smtp.host"), "{error}");
    let smtp = "[smtp]\nhost = \"mail.example\"\nfrom = \"CopyHound <alerts@p01.example>\"\npassword = \"hunter2\"\n";
    let (config, _) = load("mail2.toml", &format!("{smtp}{alert}")).unwrap();
    assert_eq!(config.smtp.port, 587);
    assert!(
        !toml::to_string(&config.masked())
            .unwrap()
            .contains("hunter2")
    );
    let injected = alert.replace("legal@p01.example", "a@b.example\\r\\nBcc: x@y.example");
    let error = load("mail3.toml", &format!("{smtp}{injected}")).unwrap_err();
    assert!(
        error.to_string().contains("not an e-mail address"),
        "{error}"
    );
    let neither = "[[reports.alerts]]\npublisher = \"P01\"\n";
    let error = load("mail4.toml", neither).unwrap_err();
    assert!(
        error.to_string().contains("webhook_url, email_to"),
        "{error}"
    );
    let unsigned =
        "[[reports.alerts]]\npublisher = \"P01\"\nwebhook_url = \"https://h.example/x\"\n";
    let error = load("mail5.toml", unsigned).unwrap_err();
    assert!(error.to_string().contains("secret"), "{error}");
    let (config, _) = ConfigLoader::default()
        .env(env(&[
            ("COPYHOUND_SMTP_HOST", "relay.example"),
            ("COPYHOUND_SMTP_PORT", "2525"),
            ("COPYHOUND_SMTP_FROM", "alerts@p01.example"),
        ]))
        .load()
        .unwrap();
    assert_eq!(
        (config.smtp.host.as_str(), config.smtp.port),
        ("relay.example", 2525)
    );
}

#[test]
fn rdap_lookups_are_off_by_default_and_checked_when_set() {
    let (config, _) = ConfigLoader::default().load().unwrap();
    assert_eq!(config.rdap.bootstrap, "", "no default reaches the internet");
    assert_eq!(config.rdap.requests_per_second, 1.0);
    let load = |pairs: &[(&str, &str)]| ConfigLoader::default().env(env(pairs)).load();
    let (config, _) = load(&[
        ("COPYHOUND_RDAP_BOOTSTRAP", "https://data.iana.org/rdap/"),
        ("COPYHOUND_RDAP_REQUESTS_PER_SECOND", "0.5"),
    ])
    .unwrap();
    assert_eq!(config.rdap.bootstrap, "https://data.iana.org/rdap/");
    assert_eq!(config.rdap.requests_per_second, 0.5);
    let (config, _) = load(&[("COPYHOUND_RDAP_BOOTSTRAP", "/etc/copyhound/rdap")]).unwrap();
    assert_eq!(config.rdap.bootstrap, "/etc/copyhound/rdap");
    for (key, value, fragment) in [
        (
            "COPYHOUND_RDAP_BOOTSTRAP",
            "https://data.iana.org/rdap",
            "must end in `/`",
        ),
        (
            "COPYHOUND_RDAP_BOOTSTRAP",
            "ftp://mirror.example/rdap/",
            "neither",
        ),
        (
            "COPYHOUND_RDAP_REQUESTS_PER_SECOND",
            "0",
            "requests_per_second",
        ),
        ("COPYHOUND_RDAP_TIMEOUT_MS", "0", "timeout_ms"),
    ] {
        let error = load(&[(key, value)]).unwrap_err();
        assert!(
            error.to_string().contains(fragment),
            "{key}={value}: {error}"
        );
    }
}
