//! The `[reports]` scheduler of a node, over HTTP and SMTP: each schedule
//! slot is queued once however often the scheduler ticks, an alert posts one
//! signed webhook per newly confirmed batch however many schedulers run, and
//! an e-mail alert reaches a real SMTP server once.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use copyhound_core::config::{AlertHook, ReportSchedule};
use copyhound_core::ids::{ChapterId, MatchId, PageId, SiteId, WorkId};
use copyhound_core::model::{Publisher, PublisherKind, ReportFormat, Review};

use chrono::Utc;
use copyhound_core::config::Config;
use copyhound_core::ids::PublisherId;
use copyhound_core::model::{Match, MatchStatus};
use copyhound_core::ports::PageRequest;
use copyhound_runtime::Node;

type Received = Arc<Mutex<Vec<(Option<String>, Vec<u8>)>>>;

async fn webhook_receiver() -> (String, Received) {
    let received: Received = Arc::default();
    let sink = received.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let sink = sink.clone();
                async move {
                    let signature = headers
                        .get(copyhound_report::SIGNATURE_HEADER)
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_string);
                    sink.lock().unwrap().push((signature, body.to_vec()));
                    "ok"
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}/hook"), received)
}

fn confirmed_match(publisher_id: &PublisherId) -> Match {
    let now = Utc::now();
    let page_id = PageId::for_url("http://pirate.example/1.html");
    let (work_id, chapter_id): (WorkId, ChapterId) = ("w1".parse().unwrap(), "c1".parse().unwrap());
    Match {
        id: MatchId::for_pair(publisher_id, &page_id, &work_id, &chapter_id, 1),
        publisher_id: publisher_id.clone(),
        page_id,
        page_url: "http://pirate.example/1.html".into(),
        site_id: "site1".parse::<SiteId>().unwrap(),
        work_id,
        chapter_id,
        fingerprint_version: 1,
        score: 0.9,
        chapter_coverage: 0.95,
        page_coverage: 0.8,
        spans: Vec::new(),
        evidence: Vec::new(),
        page_body_sha256: "00".repeat(32),
        page_reading: Default::default(),
        duplicate_page_ids: Vec::new(),
        status: MatchStatus::New,
        reviews: Vec::new(),
        first_seen: now,
        last_seen: now,
    }
}

/// The first reports of a publisher.
async fn reports_of(
    node: &copyhound_runtime::Node,
    publisher_id: &PublisherId,
) -> Vec<copyhound_core::model::Report> {
    let first = PageRequest {
        after: None,
        limit: 10,
    };
    let stores = &node.backends().stores;
    stores
        .reports
        .list_reports(publisher_id, &first)
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn schedules_enqueue_each_slot_once_and_alerts_post_signed_json_once() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = webhook_receiver().await;
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.reports.schedules = vec![ReportSchedule {
        publisher: "P01".into(),
        cron: "0 6 * * *".into(),
        format: ReportFormat::Json,
    }];
    config.reports.alerts = vec![AlertHook {
        publisher: "P01".into(),
        webhook_url: Some(url),
        secret: Some("s3cret".into()),
        email_to: Vec::new(),
        threshold_new_confirmed: 1,
        alert_on: Default::default(),
    }];
    let node = node_with_a_confirmed_match(&config).await;
    let backends = node.backends();
    let publisher_id: PublisherId = "P01".parse().unwrap();

    let scheduler = node.report_scheduler().unwrap();
    scheduler.tick(Utc::now()).await.unwrap();
    scheduler.tick(Utc::now()).await.unwrap();

    let stats = backends.queue.stats().await.unwrap();
    assert_eq!(stats.depth, 1, "one report task for the last slot, not two");
    let reports = reports_of(&node, &publisher_id).await;
    assert_eq!(reports.len(), 1);
    let posts = received.lock().unwrap().clone();
    assert_eq!(posts.len(), 1, "one alert for one newly confirmed match");
    let (signature, body) = &posts[0];
    assert!(copyhound_report::verify_signature(
        b"s3cret",
        body,
        signature.as_deref().unwrap()
    ));
    let payload: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(payload["publisher_id"], "P01", "{payload}");
    let log = std::fs::read_to_string(dir.path().join("alerts/deliveries.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 1);
}

/// A node with publisher P01 and one confirmed match.
async fn node_with_a_confirmed_match(config: &Config) -> Node {
    let node = Node::build(config).await.unwrap();
    let stores = &node.backends().stores;
    let publisher_id: PublisherId = "P01".parse().unwrap();
    stores
        .publishers
        .put_publisher(&Publisher {
            id: publisher_id.clone(),
            name: "P01".into(),
            kind: PublisherKind::Books,
            created_at: Utc::now(),
            policy: Default::default(),
            alerts: Default::default(),
            report_schedules: Vec::new(),
            profile: Default::default(),
        })
        .await
        .unwrap();
    let found = confirmed_match(&publisher_id);
    stores.matches.upsert_match(&found).await.unwrap();
    let review = Review {
        status: MatchStatus::Confirmed,
        by: "test".into(),
        at: Utc::now(),
        note: None,
    };
    stores
        .matches
        .review_match(&publisher_id, &found.id, &review)
        .await
        .unwrap();
    node
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_schedulers_send_each_alert_once() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = webhook_receiver().await;
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.reports.alerts = vec![AlertHook {
        publisher: "P01".into(),
        webhook_url: Some(url),
        secret: Some("s3cret".into()),
        email_to: Vec::new(),
        threshold_new_confirmed: 1,
        alert_on: Default::default(),
    }];
    let node = node_with_a_confirmed_match(&config).await;
    let schedulers: Vec<_> = (0..6)
        .map(|_| Arc::new(node.report_scheduler().unwrap()))
        .collect();
    let now = Utc::now();
    let ticks = schedulers.iter().map(|scheduler| {
        let scheduler = scheduler.clone();
        tokio::spawn(async move { scheduler.tick(now).await.unwrap() })
    });
    for tick in futures_util::future::join_all(ticks).await {
        tick.unwrap();
    }
    for scheduler in &schedulers {
        scheduler.tick(Utc::now()).await.unwrap();
    }
    assert_eq!(
        received.lock().unwrap().len(),
        1,
        "six schedulers, one alert"
    );
}

#[tokio::test]
async fn email_alerts_reach_an_smtp_server_once() {
    use copyhound_core::test_services::{SMTP_URL, service_url};
    let Some(smtp) = service_url(SMTP_URL, "the SMTP alert test") else {
        return;
    };
    let maildir = std::path::PathBuf::from(std::env::var("COPYHOUND_TEST_SMTP_MAILDIR").unwrap());
    let address = smtp.trim_start_matches("smtp://");
    let (host, port) = address.rsplit_once(':').unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.smtp.host = host.into();
    config.smtp.port = port.parse().unwrap();
    config.smtp.security = copyhound_core::config::SmtpSecurity::None;
    config.smtp.from = "CopyHound <alerts@copyhound.test>".into();
    let recipient = format!("legal+{}@p01.example", uuid::Uuid::now_v7().simple());
    config.reports.alerts = vec![AlertHook {
        publisher: "P01".into(),
        webhook_url: None,
        secret: None,
        email_to: vec![recipient.clone()],
        threshold_new_confirmed: 1,
        alert_on: Default::default(),
    }];
    config.validate().unwrap();
    let node = node_with_a_confirmed_match(&config).await;
    let scheduler = node.report_scheduler().unwrap();
    scheduler.tick(Utc::now()).await.unwrap();
    scheduler.tick(Utc::now()).await.unwrap();
    let mut delivered = Vec::new();
    for _ in 0..50 {
        delivered = std::fs::read_dir(maildir.join("new"))
            .map(|entries| {
                entries
                    .filter_map(|entry| std::fs::read_to_string(entry.unwrap().path()).ok())
                    .filter(|message| message.contains(&recipient))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        if !delivered.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(delivered.len(), 1, "one e-mail for one alert");
    let message = &delivered[0];
    assert!(
        message.contains("Subject: [CopyHound] 1 newly confirmed infringement for P01"),
        "{message}"
    );
    assert!(
        message.contains("http://pirate.example/1.html"),
        "{message}"
    );
    assert!(message.contains("text/html"), "{message}");
    assert!(message.contains("X-CopyHound-Delivery: dlv_"), "{message}");
    let log = std::fs::read_to_string(dir.path().join("alerts/deliveries.jsonl")).unwrap();
    assert!(log.contains("\"outcome\":\"delivered\""), "{log}");
}

/// Alerts a publisher set up in the console: no `[[reports.alerts]]`, only
/// the installation's mail server and the publisher's own recipients.
#[tokio::test]
async fn a_publishers_own_e_mail_alert_is_sent_once() {
    use copyhound_core::test_services::{SMTP_URL, service_url};
    let Some(smtp) = service_url(SMTP_URL, "the SMTP alert test") else {
        return;
    };
    let maildir = std::path::PathBuf::from(std::env::var("COPYHOUND_TEST_SMTP_MAILDIR").unwrap());
    let (host, port) = smtp.trim_start_matches("smtp://").rsplit_once(':').unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.smtp.host = host.into();
    config.smtp.port = port.parse().unwrap();
    config.smtp.security = copyhound_core::config::SmtpSecurity::None;
    config.smtp.from = "CopyHound <alerts@copyhound.test>".into();
    config.validate().unwrap();
    let node = node_with_a_confirmed_match(&config).await;
    let recipient = format!("desk+{}@p01.example", uuid::Uuid::now_v7().simple());
    let publishers = &node.backends().stores.publishers;
    let mut publisher = publishers
        .get_publisher(&"P01".parse().unwrap())
        .await
        .unwrap();
    publisher.alerts.email_to = vec![recipient.clone()];
    publishers.put_publisher(&publisher).await.unwrap();

    let scheduler = node.report_scheduler().unwrap();
    scheduler.tick(Utc::now()).await.unwrap();
    scheduler.tick(Utc::now()).await.unwrap();
    let mut delivered = 0;
    for _ in 0..50 {
        delivered = std::fs::read_dir(maildir.join("new"))
            .map(|entries| {
                entries
                    .filter_map(|entry| std::fs::read_to_string(entry.unwrap().path()).ok())
                    .filter(|message| message.contains(&recipient))
                    .count()
            })
            .unwrap_or_default();
        if delivered > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(delivered, 1, "one e-mail for one alert");
}

/// Schedules a publisher set in the console: each slot's report is queued
/// once, in the publisher's format, however often the scheduler ticks; two
/// schedules of one publisher are two reports.
#[tokio::test]
async fn a_publishers_own_report_schedules_queue_each_slot_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let node = node_with_a_confirmed_match(&config).await;
    let backends = node.backends();
    let publisher_id: PublisherId = "P01".parse().unwrap();
    let publishers = &backends.stores.publishers;
    let mut publisher = publishers.get_publisher(&publisher_id).await.unwrap();
    publisher.report_schedules = vec![
        copyhound_core::model::ReportScheduleSetting {
            cron: "0 6 * * 1".into(),
            format: ReportFormat::Csv,
            email: false,
        },
        copyhound_core::model::ReportScheduleSetting {
            cron: "0 3 * * *".into(),
            format: ReportFormat::Html,
            email: false,
        },
    ];
    publishers.put_publisher(&publisher).await.unwrap();

    let scheduler = node.report_scheduler().unwrap();
    let now = Utc::now();
    scheduler.tick(now).await.unwrap();
    scheduler
        .tick(now + chrono::Duration::seconds(30))
        .await
        .unwrap();
    let reports = reports_of(&node, &publisher_id).await;
    let mut formats: Vec<ReportFormat> = reports.iter().map(|report| report.format).collect();
    formats.sort_by_key(|format| format!("{format:?}"));
    assert_eq!(formats, [ReportFormat::Csv, ReportFormat::Html]);
    assert_eq!(backends.queue.stats().await.unwrap().depth, 2);
    // Another tenant's schedules are not this one's reports.
    assert!(reports_of(&node, &"P02".parse().unwrap()).await.is_empty());
}

/// The hourly cap holds on what fires, not on how a cron is spelled:
/// respelling a schedule between ticks (each spelling hourly on its own)
/// queues no more than one report of a format an hour.
#[tokio::test]
async fn respelled_report_schedules_fire_at_most_hourly() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let node = node_with_a_confirmed_match(&config).await;
    let backends = node.backends();
    let publisher_id: PublisherId = "P01".parse().unwrap();
    let publishers = &backends.stores.publishers;
    let scheduler = node.report_scheduler().unwrap();
    let now = Utc::now();
    let spellings = [
        "0 * * * *",
        "0 0-23 * * *",
        "0 */1 * * *",
        "1 * * * *",
        "2 * * * *",
        "0 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23 * * *",
        "59 * * * *",
    ];
    for (n, cron) in spellings.into_iter().enumerate() {
        let mut publisher = publishers.get_publisher(&publisher_id).await.unwrap();
        publisher.report_schedules = vec![
            copyhound_core::model::ReportScheduleSetting {
                cron: cron.into(),
                format: ReportFormat::Csv,
                email: false,
            },
            copyhound_core::model::ReportScheduleSetting {
                cron: format!("{} * * * *", (n * 7) % 60),
                format: ReportFormat::Csv,
                email: false,
            },
        ];
        publishers.put_publisher(&publisher).await.unwrap();
        scheduler
            .tick(now + chrono::Duration::seconds(n as i64 * 3))
            .await
            .unwrap();
    }
    assert_eq!(reports_of(&node, &publisher_id).await.len(), 1);
    // An hour later the next slot runs.
    scheduler
        .tick(now + chrono::Duration::minutes(61))
        .await
        .unwrap();
    assert_eq!(reports_of(&node, &publisher_id).await.len(), 2);
}

/// A schedule set to e-mail its reports: once rendered, each report reaches
/// the publisher's alert recipients on a real SMTP server, attached, once
/// however often the scheduler ticks and the task runs.
#[tokio::test]
async fn a_scheduled_report_is_e_mailed_to_the_alert_recipients_once() {
    use copyhound_core::test_services::{SMTP_URL, service_url};
    let Some(smtp) = service_url(SMTP_URL, "the scheduled report e-mail test") else {
        return;
    };
    let maildir = std::path::PathBuf::from(std::env::var("COPYHOUND_TEST_SMTP_MAILDIR").unwrap());
    let (host, port) = smtp.trim_start_matches("smtp://").rsplit_once(':').unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    config.smtp.host = host.into();
    config.smtp.port = port.parse().unwrap();
    config.smtp.security = copyhound_core::config::SmtpSecurity::None;
    config.smtp.from = "CopyHound <reports@copyhound.test>".into();
    config.validate().unwrap();
    let node = node_with_a_confirmed_match(&config).await;
    let recipient = format!("desk+{}@p01.example", uuid::Uuid::now_v7().simple());
    let publishers = &node.backends().stores.publishers;
    let publisher_id: PublisherId = "P01".parse().unwrap();
    let mut publisher = publishers.get_publisher(&publisher_id).await.unwrap();
    publisher.alerts.email_to = vec![recipient.clone()];
    // An alert would go to the same desk: this test is about the report.
    publisher.alerts.threshold_new_confirmed = 1000;
    publisher.report_schedules = vec![copyhound_core::model::ReportScheduleSetting {
        cron: "0 6 * * 1".into(),
        format: ReportFormat::Csv,
        email: true,
    }];
    publishers.put_publisher(&publisher).await.unwrap();

    let scheduler = node.report_scheduler().unwrap();
    let worker = node
        .worker(Some(1), Arc::new(copyhound_crawler::NoProgress))
        .unwrap();
    for _ in 0..2 {
        scheduler.tick(Utc::now()).await.unwrap();
        worker.run_until_idle(|_| {}).await.unwrap();
    }
    let reports = reports_of(&node, &publisher_id).await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    let mut delivered = Vec::new();
    for _ in 0..50 {
        delivered = std::fs::read_dir(maildir.join("new"))
            .map(|entries| {
                entries
                    .filter_map(|entry| std::fs::read_to_string(entry.unwrap().path()).ok())
                    .filter(|message| message.contains(&recipient))
                    .collect()
            })
            .unwrap_or_default();
        if !delivered.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(delivered.len(), 1, "one e-mail for one report");
    let message = &delivered[0];
    assert!(
        message.contains("Scheduled csv report for P01"),
        "{message}"
    );
    assert!(
        message.contains("Content-Disposition: attachment"),
        "{message}"
    );
    assert!(message.contains(&format!("{}.csv", report.id)), "{message}");
    let state = node
        .backends()
        .stores
        .reports
        .get_alert_state(&copyhound_report::report_mail_state_id(
            &publisher_id,
            &report.id,
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        state.last_outcome.as_deref(),
        Some(format!("delivered (attached) to {recipient}").as_str())
    );
}
