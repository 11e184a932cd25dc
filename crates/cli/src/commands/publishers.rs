//! `copyhound publishers` and `copyhound keys`: tenants and their API keys on
//! the same stores the server uses, for an operator at the shell (the first
//! publisher, the first key that logs in to the console). Creating either does
//! what the admin API does: the same checks, and keys minted by
//! [`copyhound_core::api_keys::issue_key`].
//! [`known_publisher`] is how other commands refuse an unknown publisher.

use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::Utc;
use copyhound_core::ErrorKind;
use copyhound_core::api_keys::issue_key;
use copyhound_core::config::{Backend, Config};
use copyhound_core::ids::{ApiKeyId, PublisherId};
use copyhound_core::model::{Publisher, PublisherKind, Role};
use copyhound_core::ports::collect_all;
use copyhound_runtime::{Backends, Node};
use copyhound_server::api::admin::{MAX_KEY_NAME_CHARS, MAX_PUBLISHER_NAME_CHARS};
use copyhound_server::api::required_text;

use crate::cli::{
    KeyCreateArgs, KeysCommand, PublisherAddArgs, PublisherKindArg, PublishersCommand, RoleArg,
};

pub async fn publishers(config: &Config, command: PublishersCommand) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    match command {
        PublishersCommand::List => list(backends).await?,
        PublishersCommand::Add(args) => add(backends, args).await?,
        PublishersCommand::Show { publisher } => {
            show(config, backends, &parse_publisher(&publisher)?).await?;
        }
    }
    backends.persist().await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn keys(config: &Config, command: KeysCommand) -> anyhow::Result<ExitCode> {
    let node = Node::open(config).await?;
    let backends = node.backends();
    let store = &backends.stores.publishers;
    match command {
        KeysCommand::List { publisher } => {
            let publisher_id = parse_publisher(&publisher)?;
            known_publisher(config, backends, &publisher_id).await?;
            let keys = store.list_api_keys(&publisher_id).await?;
            if keys.is_empty() {
                println!(
                    "no keys for publisher {publisher_id} (create one with \
                     `copyhound keys create {publisher_id} --role admin`)"
                );
            }
            for key in &keys {
                let state = if key.revoked { "revoked" } else { "active" };
                println!(
                    "{}  {:<9}  {state:<7}  {}  {}",
                    key.id,
                    role_name(key.role),
                    key.created_at.format("%Y-%m-%d %H:%M UTC"),
                    key.name.as_deref().unwrap_or("-")
                );
            }
        }
        KeysCommand::Create(args) => create_key(config, backends, args).await?,
        KeysCommand::Revoke { key } => {
            let key_id: ApiKeyId = key
                .parse()
                .with_context(|| format!("`{key}` is not a key id (`keys list` shows them)"))?;
            let mut record = match store.get_api_key(&key_id).await {
                Ok(record) => record,
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    bail!("unknown key `{key_id}` (`copyhound keys list PUBLISHER` lists keys)")
                }
                Err(error) => return Err(error.into()),
            };
            if record.revoked {
                println!(
                    "key {key_id} of publisher {} was revoked already",
                    record.publisher_id
                );
            } else {
                record.revoked = true;
                store.put_api_key(&record).await?;
                tracing::info!(key_id = %key_id, by = "cli", "api key revoked");
                println!("revoked key {key_id} of publisher {}", record.publisher_id);
            }
        }
    }
    backends.persist().await?;
    Ok(ExitCode::SUCCESS)
}

/// Returns the stored publisher `id`, or an error naming it and saying how
/// to create one.
pub async fn known_publisher(
    config: &Config,
    backends: &Backends,
    id: &PublisherId,
) -> anyhow::Result<Publisher> {
    match backends.stores.publishers.get_publisher(id).await {
        Ok(publisher) => Ok(publisher),
        Err(error) if error.kind() == ErrorKind::NotFound => {
            bail!("{}", unknown_publisher_message(config, id))
        }
        Err(error) => Err(error.into()),
    }
}

/// The message of an unknown publisher: where it was looked for (never a
/// store URL: it may hold credentials) and how to create one.
fn unknown_publisher_message(config: &Config, id: &PublisherId) -> String {
    let place = match config.store_backend() {
        Backend::Embedded(_) => config.data_dir.display().to_string(),
        Backend::Remote(_) => "the configured store".to_string(),
    };
    let mut message = format!(
        "unknown publisher `{id}` in {place}: create it with `copyhound publishers add {id} \
         --name NAME` (or import its works with `copyhound works import DIR`); \
         `copyhound publishers list` lists publishers"
    );
    let demo = config.data_dir.join("demo").join("data");
    if demo.try_exists().unwrap_or(false) {
        message.push_str(&format!(
            "; the demo keeps its own data: `copyhound --data-dir {} publishers list`",
            demo.display()
        ));
    }
    message
}

fn parse_publisher(raw: &str) -> anyhow::Result<PublisherId> {
    raw.parse()
        .with_context(|| format!("`{raw}` is not a valid publisher id"))
}

async fn list(backends: &Backends) -> anyhow::Result<()> {
    let store = &backends.stores.publishers;
    let all = collect_all(200, |request| async move {
        store.list_publishers(&request).await
    })
    .await?;
    if all.is_empty() {
        println!(
            "no publishers (add one with `copyhound publishers add ID --name NAME`, \
             or import works with `copyhound works import DIR`)"
        );
    }
    for publisher in &all {
        println!(
            "{}  {}  {}  created {}",
            publisher.id,
            publisher.name,
            kind_name(publisher.kind),
            publisher.created_at.format("%Y-%m-%d")
        );
    }
    Ok(())
}

async fn add(backends: &Backends, args: PublisherAddArgs) -> anyhow::Result<()> {
    let id = parse_publisher(&args.id)?;
    let store = &backends.stores.publishers;
    match store.get_publisher(&id).await {
        Ok(_) => bail!("publisher {id} exists (`copyhound publishers show {id}`)"),
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Err(error) => return Err(error.into()),
    }
    let publisher = Publisher {
        id,
        name: required_text("name", &args.name, MAX_PUBLISHER_NAME_CHARS)?,
        kind: match args.kind {
            PublisherKindArg::Books => PublisherKind::Books,
            PublisherKindArg::News => PublisherKind::News,
        },
        created_at: Utc::now(),
        policy: Default::default(),
        alerts: Default::default(),
        report_schedules: Vec::new(),
        profile: Default::default(),
    };
    store.put_publisher(&publisher).await?;
    tracing::info!(publisher_id = %publisher.id, by = "cli", "publisher created");
    println!("added publisher {} ({})", publisher.id, publisher.name);
    println!(
        "next: `copyhound keys create {} --role admin` makes the key its staff log in with",
        publisher.id
    );
    Ok(())
}

async fn show(config: &Config, backends: &Backends, id: &PublisherId) -> anyhow::Result<()> {
    let publisher = known_publisher(config, backends, id).await?;
    println!("{}", serde_json::to_string_pretty(&publisher)?);
    let stores = &backends.stores;
    let works = collect_all(200, |request| async move {
        stores.works.list_works(id, &request).await
    })
    .await?;
    let sites = collect_all(200, |request| async move {
        stores.sites.list_sites(Some(id), &request).await
    })
    .await?;
    let keys = stores.publishers.list_api_keys(id).await?;
    let active = keys.iter().filter(|key| !key.revoked).count();
    println!(
        "{} works, {} sites, {} keys ({active} active)",
        works.len(),
        sites.len(),
        keys.len()
    );
    Ok(())
}

/// Mints a key as `POST /admin/publishers/{id}/keys` does and prints it once:
/// the key alone on stdout (for scripts), the rest on stderr.
async fn create_key(
    config: &Config,
    backends: &Backends,
    args: KeyCreateArgs,
) -> anyhow::Result<()> {
    let publisher_id = parse_publisher(&args.publisher)?;
    known_publisher(config, backends, &publisher_id).await?;
    let name = args
        .name
        .as_deref()
        .map(|name| required_text("name", name, MAX_KEY_NAME_CHARS))
        .transpose()?;
    let role = match args.role {
        RoleArg::Publisher => Role::Publisher,
        RoleArg::Admin => Role::Admin,
    };
    let mut issued = issue_key(publisher_id, role);
    issued.record.name = name;
    backends
        .stores
        .publishers
        .put_api_key(&issued.record)
        .await?;
    let record = &issued.record;
    tracing::info!(key_id = %record.id, publisher_id = %record.publisher_id, by = "cli", "api key created");
    eprintln!(
        "created key {} ({} key of publisher {}); it is shown once, here:",
        record.id,
        role_name(record.role),
        record.publisher_id
    );
    println!("{}", issued.key);
    eprintln!(
        "log in with it at the console's /login (`copyhound serve`), or send it as \
         `Authorization: Bearer <key>`; `copyhound keys revoke {}` revokes it",
        record.id
    );
    Ok(())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Publisher => "publisher",
        Role::Admin => "admin",
    }
}

fn kind_name(kind: PublisherKind) -> &'static str {
    match kind {
        PublisherKind::Books => "books",
        PublisherKind::News => "news",
    }
}
