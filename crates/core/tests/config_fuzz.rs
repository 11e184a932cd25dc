//! Configuration loading never panics: arbitrary bytes, mangled TOML, arbitrary
//! `COPYHOUND_*` variables and `--option` overrides load or fail with a
//! `Config` error. Case counts are small so the suite stays fast.
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use copyhound_core::ErrorKind;
use copyhound_core::config::ConfigLoader;
use proptest::prelude::*;

const GOOD: &str = include_str!("../resources/tests/copyhound.good.toml");

/// A config file of its own for each case (cases of different tests run in parallel).
struct ConfigFile(PathBuf);

impl ConfigFile {
    fn new(bytes: &[u8]) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "copyhound-config-fuzz-{}-{}.toml",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).unwrap();
        Self(path)
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Loads and returns whether it worked; any failure must be a `Config` error.
fn load(loader: &ConfigLoader) -> Result<bool, TestCaseError> {
    match loader.load() {
        Ok(_) => Ok(true),
        Err(error) => {
            prop_assert_eq!(error.kind(), ErrorKind::Config, "{}", error);
            Ok(false)
        }
    }
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("version".to_string()),
        Just("data_dir".to_string()),
        "(store|index|queue|crawler|matcher|worker|server|log|reports)\\.[a-z_]{1,24}",
        "[a-z_.]{0,30}",
    ]
}

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?[0-9]{1,24}",
        "-?[0-9]{1,6}\\.[0-9]{0,4}(e[0-9]{1,4})?",
        Just("true".to_string()),
        "\"[^\"\\\\\n]{0,24}\"",
        "\\[(-?[0-9]{1,3}, ?){0,3}\\]",
        "\\{ ?[a-z]{1,6} = [0-9]{1,3} ?\\}",
        "\"\\$\\{[A-Z_]{0,8}(:-[^}\"\n]{0,8})?\\}?\"",
        "[^\n]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let file = ConfigFile::new(&bytes);
        load(&ConfigLoader::new(Some(file.0.clone())))?;
    }

    #[test]
    fn generated_toml_never_panics(
        lines in proptest::collection::vec(
            (proptest::option::of("\\[\\[?[a-z_.]{0,12}\\]\\]?"), key(), toml_value()),
            0..12,
        ),
    ) {
        let text: String = lines
            .iter()
            .map(|(section, key, value)| match section {
                Some(section) => format!("{section}\n{key} = {value}\n"),
                None => format!("{key} = {value}\n"),
            })
            .collect();
        let file = ConfigFile::new(text.as_bytes());
        load(&ConfigLoader::new(Some(file.0.clone())))?;
    }

    #[test]
    fn mangled_good_files_never_panic(
        cut in 0usize..GOOD.len(),
        position in 0usize..GOOD.len(),
        byte in any::<u8>(),
    ) {
        let mut bytes = GOOD.as_bytes()[..cut.max(1)].to_vec();
        let index = position % bytes.len();
        bytes[index] = byte;
        let file = ConfigFile::new(&bytes);
        load(&ConfigLoader::new(Some(file.0.clone())))?;
    }

    #[test]
    fn arbitrary_env_and_overrides_never_panic(
        env in proptest::collection::btree_map("COPYHOUND_[A-Z_]{0,24}", "[^\u{0}]{0,16}", 0..6),
        overrides in proptest::collection::vec((key(), toml_value()), 0..6),
    ) {
        let file = ConfigFile::new(GOOD.as_bytes());
        let mut loader = ConfigLoader::new(Some(file.0.clone())).env(env.into_iter().collect::<BTreeMap<_, _>>());
        for (key, value) in overrides {
            loader = loader.set(key, value);
        }
        load(&loader)?;
    }
}

#[test]
fn the_good_fixture_still_loads() {
    let file = ConfigFile::new(GOOD.as_bytes());
    assert!(load(&ConfigLoader::new(Some(file.0.clone()))).unwrap());
}
