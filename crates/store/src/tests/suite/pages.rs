//! Conformance checks: pages, fingerprints, artifacts.

use copyhound_core::ErrorKind;
use copyhound_core::ids::{PageId, ReportId};
use copyhound_core::model::FingerprintOwner;
use copyhound_core::ports::PageUpsert;

use super::{first, prepare};
use crate::Stores;
use crate::tests::fixtures::{self, at};

pub(crate) async fn page_history_follows_content_changes(stores: &Stores) {
    prepare(stores).await;
    let url = "http://127.0.0.1:8001/chapter-1.html";
    let original = fixtures::page(url, "site_a", "第一版");
    assert_eq!(
        stores.pages.upsert_page(&original).await.unwrap(),
        PageUpsert::New
    );
    let revisit = copyhound_core::model::Page {
        last_seen: at(10),
        first_seen: at(10),
        ..original.clone()
    };
    assert_eq!(
        stores.pages.upsert_page(&revisit).await.unwrap(),
        PageUpsert::Unchanged
    );
    let stored = stores.pages.get_page(&original.id).await.unwrap();
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(10)));
    // The same text in other bytes: the body follows the fetch that brought it.
    let mut reserved = revisit.clone();
    reserved
        .raw_body
        .extend_from_slice(b"<!-- served at 10:05 -->");
    reserved.body_sha256 = copyhound_core::ids::sha256_hex(&reserved.raw_body);
    reserved.last_seen = at(11);
    assert_eq!(
        stores.pages.upsert_page(&reserved).await.unwrap(),
        PageUpsert::Unchanged
    );
    let stored = stores.pages.get_page(&original.id).await.unwrap();
    assert_eq!(stored.raw_body, reserved.raw_body);
    assert_eq!(stored.body_sha256, reserved.body_sha256);
    assert_eq!(stored.last_seen, at(11));

    let mut changed = fixtures::page(url, "site_a", "第二版");
    (changed.first_seen, changed.last_seen) = (at(20), at(20));
    assert_eq!(
        stores.pages.upsert_page(&changed).await.unwrap(),
        PageUpsert::Changed
    );
    let mut third = fixtures::page(url, "site_a", "第三版");
    (third.first_seen, third.last_seen) = (at(30), at(30));
    let outcomes = stores.pages.upsert_pages(&[third.clone()]).await.unwrap();
    assert_eq!(outcomes, [PageUpsert::Changed]);

    let stored = stores.pages.get_page(&original.id).await.unwrap();
    assert_eq!(stored.text, "第三版");
    assert_eq!(stored.raw_body, third.raw_body);
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(30)));
    let history: Vec<_> = stored
        .previous_versions
        .iter()
        .map(|version| {
            (
                version.body_sha256.clone(),
                version.first_seen,
                version.last_seen,
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            (reserved.body_sha256.clone(), at(0), at(11)),
            (changed.body_sha256.clone(), at(20), at(20))
        ]
    );
}

pub(crate) async fn oversize_page_bodies_are_truncated(stores: &Stores) {
    prepare(stores).await;
    let limit = crate::StoreLimits::default().max_body_bytes as usize;
    let mut page = fixtures::page("http://h/huge", "site_a", "");
    page.raw_body = (0..17 << 20)
        .map(|index: usize| (index % 251) as u8)
        .collect();
    page.text = "字".repeat((17 << 20) / 3);
    stores.pages.upsert_page(&page).await.unwrap();
    let stored = stores.pages.get_page(&page.id).await.unwrap();
    assert!(stored.body_truncated);
    assert_eq!(stored.raw_body[..], page.raw_body[..limit]);
    assert!(stored.text.len() <= limit && stored.text.len() > limit - 3);
    assert_eq!(
        stored.body_sha256, page.body_sha256,
        "the hash stays the one of the full body"
    );
}

pub(crate) async fn artifacts_round_trip(stores: &Stores) {
    use rand::RngCore;
    use rand::SeedableRng;
    prepare(stores).await;
    let id: ReportId = "rep_1".parse().unwrap();
    stores
        .reports
        .put_artifact(&id, b"<html>small</html>")
        .await
        .unwrap();
    assert_eq!(
        stores.reports.get_artifact(&id).await.unwrap(),
        b"<html>small</html>"
    );
    let mut large = vec![0_u8; 9 << 20];
    rand_chacha::ChaCha8Rng::seed_from_u64(7).fill_bytes(&mut large);
    stores.reports.put_artifact(&id, &large).await.unwrap();
    assert_eq!(stores.reports.get_artifact(&id).await.unwrap(), large);
}

pub(crate) async fn u64_fingerprints_round_trip(stores: &Stores) {
    prepare(stores).await;
    let chapter = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 3);
    let page = fixtures::fingerprint(
        FingerprintOwner::Page {
            page_id: PageId::for_url("http://h/"),
        },
        3,
    );
    let older = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 2);
    stores
        .fingerprints
        .put_fingerprints(&[chapter.clone(), page.clone(), older.clone()])
        .await
        .unwrap();
    let stored = stores
        .fingerprints
        .get_fingerprint(&chapter.owner, 3)
        .await
        .unwrap();
    assert_eq!(stored, chapter);
    assert_eq!(stored.simhash, u64::MAX);
    let (listed, _) = collect_all!(1, |request| stores
        .fingerprints
        .list_fingerprints(3, &request));
    assert_eq!(listed, vec![chapter.clone(), page]);
    stores
        .fingerprints
        .delete_fingerprints(&chapter.owner)
        .await
        .unwrap();
    for version in [2, 3] {
        let error = stores
            .fingerprints
            .get_fingerprint(&chapter.owner, version)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound);
    }
    assert_eq!(
        stores
            .fingerprints
            .list_fingerprints(3, &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
}
