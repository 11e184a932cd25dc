//! Infringement reports: analytics as pure functions over matches, and rendering
//! (HTML with inline SVG charts, PDF, CSV, JSON) kept apart from them.
