//! The connection to a single Redis or a Redis Cluster, and the one place
//! where Redis errors become core errors.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

use copyhound_core::config::mask_url;
use copyhound_core::{Error, ErrorKind, Result};

/// A reconnecting connection to one Redis, or a cluster connection.
#[derive(Clone)]
pub enum Connection {
    /// One node; reconnects after restarts.
    Single(ConnectionManager),
    /// A cluster; follows slot moves and reconnects.
    Cluster(ClusterConnection),
}

impl Connection {
    /// Connects to `url`, as a cluster seed when `cluster`.
    pub async fn open(url: &str, cluster: bool) -> Result<Self> {
        let config_error = |error| {
            Error::with_source(
                ErrorKind::Config,
                format!("index url {:?} is not a redis url", mask_url(url)),
                error,
            )
        };
        if cluster {
            let client = ClusterClient::builder(vec![url])
                .connection_timeout(Duration::from_secs(2))
                .response_timeout(Duration::from_secs(10))
                .build()
                .map_err(config_error)?;
            let connection = client
                .get_async_connection()
                .await
                .map_err(redis_error("failed to connect to the index redis cluster"))?;
            return Ok(Self::Cluster(connection));
        }
        let client = redis::Client::open(url).map_err(config_error)?;
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_with_config(client, manager_config)
            .await
            .map_err(redis_error("failed to connect to the index redis"))?;
        Ok(Self::Single(manager))
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

/// Translates a Redis error: every driver error becomes a retryable
/// `Unavailable` (connection loss, restart, timeout, script failure mid-way:
/// the write protocol makes the retry converge).
pub fn redis_error(context: &'static str) -> impl FnOnce(redis::RedisError) -> Error {
    move |error| Error::with_source(ErrorKind::Unavailable, context, error)
}
