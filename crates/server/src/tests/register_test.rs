use axum::http::StatusCode;
use copyhound_core::model::TaskKind;
use serde_json::json;

use super::{Harness, assert_error};

const NOVEL: &str = "风起青萍\n作者：佚名\n第一章 风起\n　　天色已晚，林中起了大风。\n第二章 云涌\n　　第二天清晨，村口来了一个陌生人。\n第三章 雨落\n　　雨下了三天三夜。";

#[tokio::test]
async fn txt_in_gbk_is_previewed_then_imported_and_fingerprinting_is_enqueued() {
    for harness in Harness::each().await {
        let (gbk, _, _) = encoding_rs::GBK.encode(NOVEL);
        let (status, preview) = harness
            .send(
                "POST",
                "/api/v1/works/preview/txt",
                &harness.key_a,
                "text/plain",
                Some(gbk.to_vec()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{preview}");
        assert_eq!(preview["encoding"], "gb18030");
        assert_eq!(preview["chapters"].as_array().unwrap().len(), 3);
        assert_eq!(preview["chapters"][1]["title"], "第二章 云涌");
        assert_eq!(
            preview["chapters"][1]["excerpt"],
            "第二天清晨，村口来了一个陌生人。"
        );
        assert!(
            preview["warnings"][0]
                .as_str()
                .unwrap()
                .contains("before the first heading")
        );
        assert!(
            harness.enqueued().await.is_empty(),
            "a preview commits nothing"
        );

        let path = "/api/v1/works/import/txt?id=w_txt&title=%E9%A3%8E%E8%B5%B7&author=x";
        let (status, work) = harness
            .send(
                "POST",
                path,
                &harness.key_a,
                "text/plain",
                Some(gbk.to_vec()),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{work}");
        assert_eq!(work["id"], "w_txt");
        assert_eq!(work["title"], "风起");
        assert_eq!(work["language"], "zh");
        assert_eq!(
            work["fingerprint"],
            json!({"pending": 3, "indexed": 0, "failed": 0})
        );
        assert_eq!(work["chapters"][2]["id"], "c_0003");
        let tasks = harness.enqueued().await;
        assert_eq!(tasks.len(), 1);
        assert_eq!(
            tasks[0].kind,
            TaskKind::FingerprintWork {
                work_id: "w_txt".parse().unwrap()
            }
        );

        let (status, chapter) = harness
            .call(
                "GET",
                "/api/v1/works/w_txt/chapters/c_0001",
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(chapter["text"], "天色已晚，林中起了大风。");
    }
}

#[tokio::test]
async fn txt_without_headings_is_one_chapter_with_a_warning_and_custom_patterns_apply() {
    let harness = Harness::new().await;
    let (status, work) = harness
        .send(
            "POST",
            "/api/v1/works/import/txt?title=t",
            &harness.key_a,
            "text/plain",
            Some("只有正文。\n没有标题。".into()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{work}");
    assert_eq!(work["chapters"].as_array().unwrap().len(), 1);
    assert!(
        work["warnings"][0]
            .as_str()
            .unwrap()
            .contains("no chapter headings")
    );
    let path = "/api/v1/works/preview/txt?pattern=%5E%E5%8D%B7"; // ^卷
    let (status, preview) = harness
        .send(
            "POST",
            path,
            &harness.key_a,
            "text/plain",
            Some("卷一\n甲\n卷二\n乙".into()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["chapters"].as_array().unwrap().len(), 2);
    let (status, body) = harness
        .send(
            "POST",
            "/api/v1/works/preview/txt?pattern=(",
            &harness.key_a,
            "text/plain",
            Some("x".into()),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "heading pattern is not a valid regex",
    );
    let (status, body) = harness
        .send(
            "POST",
            "/api/v1/works/import/txt?title=t",
            &harness.key_a,
            "text/plain",
            Some(" \n\n".into()),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "no text",
    );
    let (status, body) = harness
        .send(
            "POST",
            "/api/v1/works/import/txt",
            &harness.key_a,
            "text/plain",
            Some("x".into()),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_input",
        "`title`",
    );
}

#[tokio::test]
async fn epub_imports_in_spine_order_and_corrupt_archives_are_refused() {
    for harness in Harness::each().await {
        let epub = copyhound_intake::formats::epub_for_test();
        let (status, preview) = harness
            .send(
                "POST",
                "/api/v1/works/preview/epub",
                &harness.key_a,
                "application/epub+zip",
                Some(epub.clone()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{preview}");
        assert_eq!(preview["title"], "测试");
        let (status, work) = harness
            .send(
                "POST",
                "/api/v1/works/import/epub",
                &harness.key_a,
                "application/epub+zip",
                Some(epub.clone()),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{work}");
        assert_eq!(work["title"], "测试");
        assert_eq!(work["chapters"][0]["title"], "第一章");
        assert_eq!(work["chapters"].as_array().unwrap().len(), 2);
        let (status, body) = harness
            .send(
                "POST",
                "/api/v1/works/import/epub",
                &harness.key_a,
                "application/epub+zip",
                Some(b"PK\x03\x04junk".to_vec()),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "not a valid zip",
        );
        let mut truncated = epub;
        truncated.truncate(truncated.len() - 40);
        let (status, body) = harness
            .send(
                "POST",
                "/api/v1/works/import/epub",
                &harness.key_a,
                "application/epub+zip",
                Some(truncated),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
}

#[tokio::test]
async fn uploads_over_the_limit_are_too_large() {
    let harness = Harness::new().await;
    let big = vec![b'a'; (1 << 20) + 10];
    let (status, body) = harness
        .send(
            "POST",
            "/api/v1/works/import/txt?title=t",
            &harness.key_a,
            "text/plain",
            Some(big.clone()),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        "upload limit",
    );
    let json_body = format!("{{\"title\": \"{}\"}}", "a".repeat(1 << 20));
    let (status, body) = harness
        .send(
            "POST",
            "/api/v1/works",
            &harness.key_a,
            "application/json",
            Some(json_body.into()),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        "upload limit",
    );
}

#[tokio::test]
async fn json_registration_update_and_delete() {
    for harness in Harness::each().await {
        let work_id = harness.register_work_a("w417").await;
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/works",
                &harness.key_b,
                Some(json!({"id": "w417", "title": "x", "chapters": [{"text": "y"}]})),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::CONFLICT,
            "conflict",
            "already in use",
        );
        let update = json!({"title": "风起青萍（修订）", "chapters": [{"id": "c_0001", "title": "第一章", "text": "新的正文。"}]});
        let (status, work) = harness
            .call(
                "PUT",
                &format!("/api/v1/works/{work_id}"),
                &harness.key_a,
                Some(update),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{work}");
        assert_eq!(work["chapters"].as_array().unwrap().len(), 1);
        assert_eq!(
            harness.enqueued().await.len(),
            2,
            "re-registration enqueues fingerprinting again"
        );
        let (status, hosts) = harness
            .call(
                "PUT",
                &format!("/api/v1/works/{work_id}/licensed-hosts"),
                &harness.key_a,
                Some(json!({"hosts": ["https://Licensed.example/x", "ok.cn"]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{hosts}");
        assert_eq!(hosts["hosts"], json!(["licensed.example", "ok.cn"]));
        let (status, _) = harness
            .call(
                "DELETE",
                &format!("/api/v1/works/{work_id}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, body) = harness
            .call(
                "GET",
                &format!("/api/v1/works/{work_id}"),
                &harness.key_a,
                None,
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::NOT_FOUND,
            "not_found",
            "work w417",
        );
    }
}

#[tokio::test]
async fn news_articles_one_by_one_and_as_json_lines() {
    for harness in Harness::each().await {
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/works",
                &harness.key_a,
                Some(json!({"id": "news1", "title": "晨报", "kind": "news"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, added) = harness
            .call(
                "POST",
                "/api/v1/works/news1/articles",
                &harness.key_a,
                Some(json!({"title": "头条", "text": "今日新闻。"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{added}");
        assert_eq!(added["chapter_ids"], json!(["c_0001"]));
        let lines = "{\"title\": \"二\", \"text\": \"正文二\"}\n\n{\"id\": \"a3\", \"title\": \"三\", \"text\": \"正文三\"}\n";
        let (status, added) = harness
            .send(
                "POST",
                "/api/v1/works/news1/articles/bulk",
                &harness.key_a,
                "application/x-ndjson",
                Some(lines.into()),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{added}");
        assert_eq!(added["chapter_ids"], json!(["c_0002", "a3"]));
        let bad = "{\"title\": \"二\", \"text\": \"x\"}\n{\"title\": 1}\n";
        let (status, body) = harness
            .send(
                "POST",
                "/api/v1/works/news1/articles/bulk",
                &harness.key_a,
                "application/x-ndjson",
                Some(bad.into()),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "line 2",
        );
        harness.register_work_a("novel1").await;
        let (status, body) = harness
            .call(
                "POST",
                "/api/v1/works/novel1/articles",
                &harness.key_a,
                Some(json!({"title": "t", "text": "x"})),
            )
            .await;
        assert_error(
            status,
            &body,
            StatusCode::CONFLICT,
            "conflict",
            "news works",
        );
    }
}

#[tokio::test]
async fn a_repeated_registration_answers_the_stored_work_and_re_enqueues_while_pending() {
    for harness in Harness::each().await {
        let body = json!({"id": "w_retry", "title": "风起", "author": "佚名",
            "chapters": [{"title": "第一章", "text": "天色已晚。"}, {"title": "第二章", "text": "村口来了人。"}]});
        let (status, first) = harness
            .call("POST", "/api/v1/works", &harness.key_a, Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        // The answer was lost (or the process died before the enqueue): the
        // client sends the same registration again.
        let (status, again) = harness
            .call("POST", "/api/v1/works", &harness.key_a, Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{again}");
        assert_eq!(again["chapters"], first["chapters"]);
        assert_eq!(again["created_at"], first["created_at"], "the stored work");
        async fn fingerprint_tasks(harness: &Harness) -> usize {
            harness
                .enqueued()
                .await
                .iter()
                .filter(|task| matches!(task.kind, TaskKind::FingerprintWork { .. }))
                .count()
        }
        assert_eq!(
            fingerprint_tasks(&harness).await,
            2,
            "pending: enqueued again"
        );
        let work_id = "w_retry".parse().unwrap();
        for chapter in ["c_0001", "c_0002"] {
            let status = copyhound_core::model::FingerprintStatus::Indexed { version: 1 };
            harness
                .state
                .ports
                .works
                .set_fingerprint_status(&work_id, &chapter.parse().unwrap(), &status)
                .await
                .unwrap();
        }
        let (status, _) = harness
            .call("POST", "/api/v1/works", &harness.key_a, Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(
            fingerprint_tasks(&harness).await,
            2,
            "indexed: nothing to redo"
        );
        // Another work under the same id, or another publisher: still a conflict.
        let mut different = body.clone();
        different["chapters"][1]["text"] = json!("村口来了另一个人。");
        for (key, request) in [(&harness.key_a, different), (&harness.key_b, body)] {
            let (status, answer) = harness
                .call("POST", "/api/v1/works", key, Some(request))
                .await;
            assert_error(
                status,
                &answer,
                StatusCode::CONFLICT,
                "conflict",
                "already in use",
            );
        }
    }
}

#[tokio::test]
async fn chapters_left_by_an_unfinished_registration_do_not_join_a_new_one() {
    for harness in Harness::each().await {
        // A registration killed after its chapters and before its work record.
        let work_id: copyhound_core::ids::WorkId = "w_torn".parse().unwrap();
        let leftover = copyhound_core::model::Chapter::new(
            work_id.clone(),
            "c_0009".parse().unwrap(),
            9,
            "残章".into(),
            "上次没有写完的注册。".into(),
        );
        harness
            .state
            .ports
            .works
            .put_chapters(&[leftover])
            .await
            .unwrap();
        let (status, work) = harness
            .call(
                "POST",
                "/api/v1/works",
                &harness.key_a,
                Some(json!({"id": "w_torn", "title": "新作", "chapters": [{"text": "正文。"}]})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{work}");
        let chapters = harness
            .state
            .ports
            .works
            .list_chapters(&work_id)
            .await
            .unwrap();
        let ids: Vec<&str> = chapters.iter().map(|chapter| chapter.id.as_str()).collect();
        assert_eq!(ids, ["c_0001"]);
    }
}
