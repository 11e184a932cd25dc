//! Reading a whole listing, page after page: the one loop every caller uses,
//! so a backend that hands back the same cursor twice is an error, never an
//! endless loop.

use std::future::Future;

use super::{PageRequest, Paged};
use crate::{Error, ErrorKind, Result};

/// The cursor state of a listing being read to its end.
///
/// ```ignore
/// let mut pages = Pages::new(200);
/// while let Some(request) = pages.next_request() {
///     for site in pages.advance(store.list_sites(None, &request).await?)? { ... }
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Pages {
    request: PageRequest,
    done: bool,
}

impl Pages {
    /// Starts at the first page, `page_size` items per page.
    pub fn new(page_size: u32) -> Self {
        Self {
            request: PageRequest {
                after: None,
                limit: page_size,
            },
            done: false,
        }
    }

    /// The request of the next page; `None` once the last page was read.
    pub fn next_request(&self) -> Option<PageRequest> {
        (!self.done).then(|| self.request.clone())
    }

    /// Whether the last page was read.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Records a fetched page and returns its items.
    pub fn advance<T>(&mut self, page: Paged<T>) -> Result<Vec<T>> {
        match page.next {
            None => self.done = true,
            Some(next) if self.request.after.as_deref() == Some(next.as_str()) => {
                self.done = true;
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("a listing returned the same cursor `{next}` twice"),
                ));
            }
            Some(next) => self.request.after = Some(next),
        }
        Ok(page.items)
    }
}

/// Reads a whole listing: `fetch` is called with each page's request in turn.
pub async fn collect_all<T, F, Fut>(page_size: u32, mut fetch: F) -> Result<Vec<T>>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: Future<Output = Result<Paged<T>>>,
{
    let mut pages = Pages::new(page_size);
    let mut all = Vec::new();
    while let Some(request) = pages.next_request() {
        all.extend(pages.advance(fetch(request).await?)?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(items: &[u32], next: Option<&str>) -> Paged<u32> {
        Paged {
            items: items.to_vec(),
            next: next.map(str::to_string),
        }
    }

    #[tokio::test]
    async fn reads_every_page_in_order() {
        let all = collect_all(2, |request| async move {
            Ok(match request.after.as_deref() {
                None => page(&[1, 2], Some("a")),
                Some("a") => page(&[3, 4], Some("b")),
                _ => page(&[5], None),
            })
        })
        .await
        .unwrap();
        assert_eq!(all, [1, 2, 3, 4, 5]);
    }

    #[tokio::test]
    async fn a_repeated_cursor_is_an_error_not_a_loop() {
        let error = collect_all(2, |_| async { Ok(page(&[1], Some("same"))) })
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Internal);
        assert!(error.to_string().contains("same"), "{error}");
    }
}
