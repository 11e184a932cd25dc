//! The crawler: scheduled, polite, bounded fetching of suspected piracy sites,
//! charset decoding, main-text extraction and a persistent frontier. Hostile input
//! (endless bodies, redirect loops, lying charsets) is bounded and recorded per
//! page, never a crash or a hang.
