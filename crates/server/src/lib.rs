//! The HTTP API and admin UI. Routes map to the ports; errors map to HTTP status
//! and stable codes in one place; every read and write is scoped to the caller's
//! publisher.
