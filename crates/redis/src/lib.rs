//! One way to reach Redis for the index and the queue.
//!
//! A Redis URL may name a single server or one node of a Redis Cluster; the
//! two need different clients (a cluster client follows `MOVED` and keeps a
//! slot map). The mode is configured (`cluster = true`) or detected from the
//! server itself (`INFO cluster`), so a URL of a cluster node works even when
//! the configuration forgot to say so. Callers keep every multi-key command,
//! script and transaction inside one slot (hash tags); this crate does not
//! split them.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, Pipeline, RedisFuture, Value};

use copyhound_core::config::mask_url;
use copyhound_core::{Error, ErrorKind, Result};

/// Connect timeout of every connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest wait for one reply (a bulk index script may take ~0.2 s).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Reconnection attempts of one call after a restart or failover.
const RETRIES: usize = 4;

/// A reconnecting connection to one Redis, or a cluster connection.
#[derive(Clone)]
pub enum Connection {
    /// One node; reconnects after restarts.
    Single(ConnectionManager),
    /// A cluster; follows slot moves and failovers, reconnects.
    Cluster(ClusterConnection),
}

impl Connection {
    /// Connects to `url` for `component` (named in errors): as a cluster seed
    /// when `cluster` is set or the server says it runs in cluster mode.
    pub async fn open(url: &str, cluster: bool, component: &'static str) -> Result<Self> {
        let client = client(url, component)?;
        if cluster || Self::server_is_cluster(&client, url, component).await? {
            return Self::open_cluster(url, component).await;
        }
        Self::single(client, url, component).await
    }

    /// Connects to one node only, whatever its mode (a `WATCH` connection
    /// must stay on one server).
    pub async fn open_single(url: &str, component: &'static str) -> Result<Self> {
        Self::single(client(url, component)?, url, component).await
    }

    async fn single(client: redis::Client, url: &str, component: &'static str) -> Result<Self> {
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(RETRIES)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_with_config(client, manager_config)
            .await
            .map_err(|error| connect_error(component, url, error))?;
        Ok(Self::Single(manager))
    }

    async fn open_cluster(url: &str, component: &'static str) -> Result<Self> {
        let client = ClusterClient::builder(vec![url])
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .retries(RETRIES as u32)
            .build()
            .map_err(|error| url_error(component, url, error))?;
        let connection = client
            .get_async_connection()
            .await
            .map_err(|error| connect_error(component, url, error))?;
        tracing::debug!(component, url = %mask_url(url), "connected to a redis cluster");
        Ok(Self::Cluster(connection))
    }

    /// Asks the server whether it runs in cluster mode.
    async fn server_is_cluster(
        client: &redis::Client,
        url: &str,
        component: &'static str,
    ) -> Result<bool> {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let mut probe = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|error| connect_error(component, url, error))?;
        let info: String = redis::cmd("INFO")
            .arg("cluster")
            .query_async(&mut probe)
            .await
            .map_err(redis_error("failed to ask redis for its mode"))?;
        Ok(cluster_enabled(&info))
    }

    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }

    /// Deletes every key that starts with `prefix` (SCAN on every primary,
    /// then `UNLINK`, which a cluster connection splits per slot). Returns
    /// how many keys were deleted.
    pub async fn delete_prefix(&mut self, prefix: &str) -> Result<u64> {
        let pattern = format!("{}*", escape_glob(prefix));
        let nodes = match self {
            Self::Single(_) => vec![None],
            Self::Cluster(_) => self.primaries().await?.into_iter().map(Some).collect(),
        };
        let mut deleted = 0;
        for node in nodes {
            let mut cursor = 0_u64;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(10_000);
                let reply = match (&mut *self, &node) {
                    (Self::Cluster(connection), Some((host, port))) => {
                        let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                            host: host.clone(),
                            port: *port,
                        });
                        connection.route_command(scan, routing).await
                    }
                    (connection, _) => scan.query_async(connection).await,
                }
                .map_err(redis_error("failed to list redis keys"))?;
                let (next, keys): (u64, Vec<Vec<u8>>) =
                    redis::from_redis_value(reply).map_err(|error| {
                        Error::with_source(ErrorKind::Unavailable, "bad SCAN reply", error)
                    })?;
                if !keys.is_empty() {
                    deleted += redis::cmd("UNLINK")
                        .arg(&keys)
                        .query_async::<u64>(self)
                        .await
                        .map_err(redis_error("failed to delete redis keys"))?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(deleted)
    }

    /// The (host, port) of every primary of the cluster.
    async fn primaries(&mut self) -> Result<Vec<(String, u16)>> {
        let nodes: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query_async(self)
            .await
            .map_err(redis_error("failed to list the redis cluster nodes"))?;
        Ok(parse_primaries(&nodes))
    }

    /// Sums `field` (a number of `INFO section`) over every primary: one
    /// server's answer, or each node's on a cluster.
    pub async fn info_sum(&mut self, section: &str, field: &str) -> Result<u64> {
        let reply: Value = redis::cmd("INFO")
            .arg(section)
            .query_async(self)
            .await
            .map_err(redis_error("failed to read redis info"))?;
        let prefix = format!("{field}:");
        let read = |text: &str| -> u64 {
            text.lines()
                .find_map(|line| line.strip_prefix(prefix.as_str()))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(0)
        };
        let texts: Vec<String> = match reply {
            Value::Map(nodes) => nodes
                .into_iter()
                .filter_map(|(_, value)| redis::from_redis_value(value).ok())
                .collect(),
            other => vec![redis::from_redis_value(other).map_err(|error| {
                Error::with_source(ErrorKind::Unavailable, "redis info is not text", error)
            })?],
        };
        Ok(texts.iter().map(|text| read(text)).sum())
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_cluster() {
            "Connection::Cluster"
        } else {
            "Connection::Single"
        })
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(connection) => connection.req_packed_command(cmd),
            Self::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(connection) => connection.req_packed_commands(pipeline, offset, count),
            Self::Cluster(connection) => connection.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(connection) => connection.get_db(),
            Self::Cluster(connection) => connection.get_db(),
        }
    }
}

/// Reads the primaries (host, port) of a `CLUSTER NODES` answer.
pub fn parse_primaries(nodes: &str) -> Vec<(String, u16)> {
    nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if !fields.get(2)?.split(',').any(|flag| flag == "master") {
                return None;
            }
            let address = fields.get(1)?.split('@').next()?;
            let (host, port) = address.rsplit_once(':')?;
            Some((host.to_owned(), port.parse().ok()?))
        })
        .collect()
}

/// Escapes the glob characters of a `SCAN MATCH` pattern.
fn escape_glob(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Whether an `INFO cluster` answer says cluster mode is on.
pub fn cluster_enabled(info: &str) -> bool {
    info.lines().any(|line| line.trim() == "cluster_enabled:1")
}

/// Wraps `prefix` in a hash tag (`{prefix}`) unless it already holds one, so
/// every key under it lands in one cluster slot.
pub fn slot_prefix(prefix: &str) -> String {
    if prefix.contains('{') {
        prefix.to_owned()
    } else {
        format!("{{{prefix}}}")
    }
}

/// Translates a Redis error: every driver error becomes a retryable
/// `Unavailable` (connection loss, restart, failover, timeout; callers'
/// write protocols make the retry converge).
pub fn redis_error(context: &'static str) -> impl FnOnce(redis::RedisError) -> Error {
    move |error| Error::with_source(ErrorKind::Unavailable, context, error)
}

fn client(url: &str, component: &'static str) -> Result<redis::Client> {
    redis::Client::open(url).map_err(|error| url_error(component, url, error))
}

fn url_error(component: &'static str, url: &str, error: redis::RedisError) -> Error {
    Error::with_source(
        ErrorKind::Config,
        format!("{component} url {:?} is not a redis url", mask_url(url)),
        error,
    )
}

fn connect_error(component: &'static str, url: &str, error: redis::RedisError) -> Error {
    Error::with_source(
        ErrorKind::Unavailable,
        format!(
            "failed to connect to the {component} redis at {}",
            mask_url(url)
        ),
        error,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_mode_is_read_from_info() {
        assert!(cluster_enabled("# Cluster\r\ncluster_enabled:1\r\n"));
        assert!(!cluster_enabled("# Cluster\r\ncluster_enabled:0\r\n"));
        assert!(!cluster_enabled(""));
    }

    #[test]
    fn primaries_are_read_from_cluster_nodes() {
        let nodes = "a1 127.0.0.1:6391@16391 myself,master - 0 0 1 connected 0-5460\n\
                     b2 127.0.0.1:6392@16392 slave a1 0 0 1 connected\n\
                     c3 127.0.0.1:6393@16393 master - 0 0 3 connected 5461-16383\n";
        assert_eq!(
            parse_primaries(nodes),
            [
                ("127.0.0.1".to_owned(), 6391),
                ("127.0.0.1".to_owned(), 6393)
            ]
        );
    }

    #[test]
    fn glob_characters_are_escaped() {
        assert_eq!(escape_glob("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
    }

    #[test]
    fn slot_prefixes_hold_one_hash_tag() {
        assert_eq!(slot_prefix("copyhound:queue:"), "{copyhound:queue:}");
        assert_eq!(slot_prefix("{q}:"), "{q}:");
    }
}
