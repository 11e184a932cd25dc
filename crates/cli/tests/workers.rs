//! Worker processes on real MongoDB and Redis: three `copyhound worker` processes
//! share one queue, one of them is killed with SIGKILL in the middle of its batch,
//! and Redis is restarted mid-run. Every page must end with exactly one match (no
//! lost task, no duplicated match).
#![allow(clippy::unwrap_used)] // tests stop on the first error, with it

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use copyhound_core::test_services;
use support::{CHAPTER, PIRATED, free_port};

mod support;

const PAGES: usize = 24;

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_copyhound"))
}

/// A Redis of this test's own (it is restarted mid-run), persisting to a temp
/// dir: one server, or a 3-primary Redis Cluster of one process per node.
struct OwnRedis {
    ports: Vec<u16>,
    dir: PathBuf,
    cluster: bool,
    children: Vec<Option<Child>>,
}

impl OwnRedis {
    fn start(dir: &Path) -> Self {
        let mut redis = OwnRedis {
            ports: vec![free_port()],
            dir: dir.to_path_buf(),
            cluster: false,
            children: vec![None],
        };
        redis.spawn(0);
        redis
    }

    fn start_cluster(dir: &Path) -> Self {
        let mut redis = OwnRedis {
            ports: (0..3).map(|_| free_port()).collect(),
            dir: dir.to_path_buf(),
            cluster: true,
            children: (0..3).map(|_| None).collect(),
        };
        for node in 0..3 {
            redis.spawn(node);
        }
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(redis.ports.iter().map(|port| format!("127.0.0.1:{port}")))
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "redis-cli --cluster create failed");
        redis.wait_cluster_ok();
        redis
    }

    fn spawn(&mut self, node: usize) {
        let port = self.ports[node];
        let dir = self.dir.join(port.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = Command::new("redis-server");
        command
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--dir"])
            .arg(&dir);
        if self.cluster {
            command
                .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"])
                .args(["--cluster-config-file", "nodes.conf"]);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .spawn()
            .expect("redis-server is installed (deploy/dev/services.sh installs it)");
        // Ready when it says so; its log is read to the end meanwhile, so it
        // never blocks on a full pipe.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines
            .by_ref()
            .map_while(std::result::Result::ok)
            .any(|line| line.contains("Ready to accept connections"));
        assert!(ready, "redis did not start");
        std::thread::spawn(move || lines.for_each(drop));
        self.children[node] = Some(child);
    }

    fn wait_cluster_ok(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let info = Command::new("redis-cli")
                .args(["-p", &self.ports[0].to_string(), "cluster", "info"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                return;
            }
            assert!(Instant::now() < deadline, "the redis cluster never came up");
            // The nodes agree on their slots in their own time: ask again shortly.
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kills the first node with SIGKILL and starts it again on its files.
    fn restart(&mut self) {
        if let Some(mut child) = self.children[0].take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        // An outage the workers notice (its length is the behaviour under test).
        std::thread::sleep(Duration::from_millis(500));
        self.spawn(0);
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.ports[0])
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        for mut child in self.children.iter_mut().filter_map(Option::take) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Serves `dir` on loopback from a thread of this test.
fn serve(dir: PathBuf) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let router =
                axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
            axum::serve(listener, router).await.unwrap();
        });
    });
    format!("http://{address}")
}

fn write_set(dir: &Path) {
    let chapters = dir.join("works/w1/chapters");
    std::fs::create_dir_all(&chapters).unwrap();
    std::fs::write(chapters.join("c1.txt"), CHAPTER).unwrap();
    let meta = serde_json::json!({"work_id": "w1", "title": "二心集", "author": "鲁迅", "publisher_id": "N01",
        "type": "news", "language": "zh",
        "chapters": [{"chapter_id": "c1", "index": 1, "title": "小引", "file": "chapters/c1.txt"}]});
    std::fs::write(dir.join("works/w1/meta.json"), meta.to_string()).unwrap();
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let mut links = String::new();
    for index in 0..PAGES {
        // Distinct pages (a unique line each) carrying the same pirated chapter.
        let mut body = PIRATED.to_vec();
        body.extend_from_slice(format!("<p>第{index}号镜像</p>").as_bytes());
        std::fs::write(site.join(format!("p{index}.html")), body).unwrap();
        links.push_str(&format!("<li><a href=\"p{index}.html\">{index}</a></li>"));
    }
    std::fs::write(
        site.join("index.html"),
        format!("<html><body><ul>{links}</ul></body></html>"),
    )
    .unwrap();
}

struct Env {
    vars: Vec<(String, String)>,
    cwd: PathBuf,
}

impl Env {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .current_dir(&self.cwd)
            .args(args)
            .env_remove("RUST_LOG");
        for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("COPYHOUND_")) {
            command.env_remove(name);
        }
        command.envs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command
    }

    fn run(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "copyhound {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Starts a worker logging to `log`; each task it finishes (done or
    /// failed) is sent on `finished` with the worker's index.
    fn worker(&self, index: usize, log: &Path, finished: mpsc::Sender<usize>) -> Child {
        let mut child = self
            .command(&["worker", "--concurrency", "2"])
            .env(
                "RUST_LOG",
                "copyhound_runtime=debug,copyhound_matcher=debug",
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut file = std::fs::File::create(log).unwrap();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(std::result::Result::ok) {
                let _ = writeln!(file, "{line}");
                if line.contains("task done") || line.contains("task failed") {
                    let _ = finished.send(index);
                }
            }
        });
        child
    }
}

#[test]
fn three_workers_share_the_queue_and_survive_a_kill_and_a_redis_restart() {
    const TEST: &str = "three_workers_share_the_queue_and_survive_a_kill_and_a_redis_restart";
    let Some(mongo) = test_services::service_url(test_services::MONGODB_URL, TEST) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let redis = OwnRedis::start(&dir.path().join("redis"));
    workers_survive_a_kill_and_a_restart(dir.path(), redis, &mongo, "single");
}

/// The same on a Redis Cluster: one primary is killed with SIGKILL and
/// restarted from its append-only file while the workers run.
#[test]
fn three_workers_survive_a_kill_and_a_cluster_node_restart() {
    const TEST: &str = "three_workers_survive_a_kill_and_a_cluster_node_restart";
    let Some(mongo) = test_services::service_url(test_services::MONGODB_URL, TEST) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let redis = OwnRedis::start_cluster(&dir.path().join("redis"));
    workers_survive_a_kill_and_a_restart(dir.path(), redis, &mongo, "cluster");
}

fn workers_survive_a_kill_and_a_restart(dir: &Path, mut redis: OwnRedis, mongo: &str, tag: &str) {
    write_set(dir);
    let base_url = serve(dir.join("site"));
    let database = format!("copyhound_workers_{tag}_{}", std::process::id());
    let cluster = redis.cluster.to_string();
    let env = Env {
        cwd: dir.to_path_buf(),
        vars: vec![
            ("COPYHOUND_STORE_URL".into(), mongo.to_owned()),
            ("COPYHOUND_STORE_DATABASE".into(), database),
            ("COPYHOUND_INDEX_URL".into(), redis.url()),
            ("COPYHOUND_INDEX_CLUSTER".into(), cluster.clone()),
            ("COPYHOUND_QUEUE_URL".into(), redis.url()),
            ("COPYHOUND_QUEUE_CLUSTER".into(), cluster),
            (
                "COPYHOUND_QUEUE_VISIBILITY_TIMEOUT_MS".into(),
                "3000".into(),
            ),
            ("COPYHOUND_QUEUE_RETRY_BACKOFF_MS".into(), "200".into()),
            ("COPYHOUND_QUEUE_MAX_ATTEMPTS".into(), "10".into()),
            (
                "COPYHOUND_CRAWLER_ALLOW_PRIVATE_ADDRESSES".into(),
                "true".into(),
            ),
            (
                "COPYHOUND_DATA_DIR".into(),
                dir.join("data").display().to_string(),
            ),
        ],
    };
    env.run(&["works", "import", dir.to_str().unwrap()]);
    let seed = format!("{base_url}/index.html");
    env.run(&[
        "sites",
        "add",
        "--publisher",
        "N01",
        "--name",
        "mirror",
        "--id",
        "mirror",
        "--seed",
        &seed,
        "--rate-limit",
        "0",
    ]);
    env.run(&["crawl", "mirror", "--no-compare"]);

    let logs: Vec<PathBuf> = (0..3)
        .map(|index| dir.join(format!("worker{index}.log")))
        .collect();
    let (finished, finishes) = mpsc::channel();
    let mut workers: Vec<Child> = logs
        .iter()
        .enumerate()
        .map(|(index, log)| env.worker(index, log, finished.clone()))
        .collect();
    drop(finished);
    // Kill one worker in the middle of its batch, once every worker is up and
    // has finished a task, then restart Redis under the others.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut working = [false; 3];
    while working.contains(&false) {
        let left = deadline.saturating_duration_since(Instant::now());
        match finishes.recv_timeout(left) {
            Ok(index) => working[index] = true,
            Err(error) => panic!("not every worker finished a task ({working:?}): {error}"),
        }
    }
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();
    redis.restart();

    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let stats = env.run(&["tasks", "stats"]);
        if stats.contains("depth 0  in flight 0  retrying 0") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the queue did not drain: {stats}"
        );
        // Look again when a worker finishes a task, or after a second at the
        // most (a killed worker's deliveries come back when their visibility
        // lapses, and the last task's acknowledgement follows its log line).
        if let Err(mpsc::RecvTimeoutError::Disconnected) =
            finishes.recv_timeout(Duration::from_secs(1))
        {
            panic!("the surviving workers exited");
        }
    }
    for worker in &mut workers[1..] {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(worker.id().to_string())
            .status();
        let _ = worker.wait();
    }

    let exported = env.run(&[
        "matches",
        "export",
        "--publisher",
        "N01",
        "--format",
        "json",
    ]);
    let matches: Vec<serde_json::Value> = exported
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut pages: Vec<&str> = matches
        .iter()
        .map(|m| m["page_url"].as_str().unwrap())
        .collect();
    pages.sort_unstable();
    pages.dedup();
    assert_eq!(pages.len(), PAGES, "every page has a match: {pages:?}");
    assert_eq!(matches.len(), PAGES, "and exactly one");
    let dead = env.run(&["tasks", "dead"]);
    assert!(dead.trim().is_empty(), "no task was dead-lettered: {dead}");
    let done: Vec<usize> = logs
        .iter()
        .map(|log| {
            std::fs::read_to_string(log)
                .unwrap_or_default()
                .matches("task done")
                .count()
        })
        .collect();
    eprintln!("tasks done per worker (worker 0 was killed): {done:?}");
    let busy = logs[1..]
        .iter()
        .filter(|log| {
            std::fs::read_to_string(log)
                .unwrap_or_default()
                .contains("task done")
        })
        .count();
    assert_eq!(
        busy, 2,
        "both surviving workers took tasks from the shared queue"
    );
}
